//go:build !amd64 || purego

package ops

// useAVX2 mirrors simd_amd64.go's: no assembly here.
var useAVX2 = false
