package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gosr.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"model-repository": "/models", "http-port": 9000, "grpc-port": -1,
		"log-format": "json", "drain-timeout": "5s", "max-request-bytes": 1048576}`), 0o644))
	f, err := parseServeFlags([]string{"-config", cfg, "-http-port", "7000"})
	require.NoError(t, err)
	assert.Equal(t, "/models", f.repo)
	assert.Equal(t, 7000, f.httpPort, "the command line wins")
	assert.Equal(t, -1, f.grpcPort)
	assert.Equal(t, "json", f.logFormat)
	assert.Equal(t, 5*time.Second, f.drain)
	assert.Equal(t, int64(1<<20), f.maxBody)
	assert.Equal(t, 8002, f.metricsPort, "the default stays")

	for _, c := range []struct{ text, msg string }{
		{`{"no-such-flag": 1}`, `"no-such-flag" is not a flag`},
		{`{"http-port": "x"}`, `"http-port"`},
		{`{"http-port": [1]}`, "a string, number or boolean"},
		{`{"config": "other.json"}`, `"config" is not a flag`},
		{`not json`, "gosr.json"},
	} {
		require.NoError(t, os.WriteFile(cfg, []byte(c.text), 0o644))
		_, err := parseServeFlags([]string{"-config", cfg})
		require.Error(t, err, c.text)
		assert.Contains(t, err.Error(), c.msg)
	}
	_, err = parseServeFlags([]string{"-model-repository", "/m", "extra"})
	assert.ErrorContains(t, err, "unexpected arguments")
}

// TestDeployedArgs: the arguments the Dockerfile and the KServe runtime
// pass are flags gosr serve takes.
func TestDeployedArgs(t *testing.T) {
	docker, err := os.ReadFile("../../Dockerfile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^CMD \[(.*)\]`).FindSubmatch(docker)
	require.NotNil(t, m, "the Dockerfile's CMD")
	var args []string
	for _, a := range strings.Split(string(m[1]), ",") {
		args = append(args, strings.Trim(strings.TrimSpace(a), `"`))
	}
	f, err := parseServeFlags(args)
	require.NoError(t, err, "%q", args)
	assert.Equal(t, "/mnt/models", f.repo)

	manifest, err := os.ReadFile("../../deploy/kserve/cluster-serving-runtime.yaml")
	require.NoError(t, err)
	args = nil
	for _, line := range regexp.MustCompile(`(?m)^\s+- (-[a-z-]+=\S+)$`).FindAllSubmatch(manifest, -1) {
		args = append(args, string(line[1]))
	}
	require.NotEmpty(t, args)
	f, err = parseServeFlags(args)
	require.NoError(t, err, "%q", args)
	assert.Equal(t, "/mnt/models", f.repo)
	assert.Equal(t, [3]int{8080, 8081, 8002}, [3]int{f.httpPort, f.grpcPort, f.metricsPort})
}

// TestMain lets TestSIGTERM run this test binary as the command.
func TestMain(m *testing.M) {
	if os.Getenv("GOSR_TEST_RUN_MAIN") == "1" {
		os.Args = append([]string{"gosr"}, strings.Fields(os.Getenv("GOSR_TEST_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSIGTERM: the command serves a repository, and on SIGTERM drains
// and exits 0.
func TestSIGTERM(t *testing.T) {
	repo := t.TempDir()
	model, err := os.ReadFile("../../testdata/serve/echo.pt")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "echo", "1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "echo", "1", "model.pt"), model, 0o644))
	port := freePort(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "GOSR_TEST_RUN_MAIN=1",
		fmt.Sprintf("GOSR_TEST_ARGS=serve -model-repository %s -host 127.0.0.1 -http-port %d -grpc-port -1 -metrics-port -1 -log-format json", repo, port))
	var logs strings.Builder
	cmd.Stderr = &logs
	require.NoError(t, cmd.Start())
	url := fmt.Sprintf("http://127.0.0.1:%d/v2/health/ready", port)
	require.Eventually(t, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, 30*time.Second, 50*time.Millisecond, "ready: %s", &logs)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "%s", &logs)
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no exit after SIGTERM: %s", &logs)
	}
	assert.Contains(t, logs.String(), `"msg":"draining"`)
	assert.Contains(t, logs.String(), `"msg":"stopped"`)
	assert.Contains(t, logs.String(), `"msg":"model ready"`)
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
