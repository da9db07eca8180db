//go:build race

package memplan

const raceEnabled = true
