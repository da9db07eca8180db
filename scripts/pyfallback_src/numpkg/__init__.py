"""Feature code that uses numpy (extern), packaged as a gosr fallback."""
