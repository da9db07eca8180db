"""Package b's own `models`: another package has a `models` too."""
