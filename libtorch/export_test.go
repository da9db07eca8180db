package libtorch

// LoadShimForTest loads a shim from path alone (not the process's one).
func LoadShimForTest(path string) error {
	_, err := loadShim([]string{path})
	return err
}
