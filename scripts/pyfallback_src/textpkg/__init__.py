"""A pure-Python wordpiece tokenizer, packaged as a gosr fallback."""
