//go:build race

// Package raceflag tells tests whether the race detector is on: under
// -race, allocation counts change (sync.Pool drops items at random), so
// zero-allocation assertions are skipped there.
package raceflag

// Enabled is true when built with -race.
const Enabled = true
