//go:build !race

package pyfallback

const raceBuild = false
