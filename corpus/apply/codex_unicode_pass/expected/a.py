msg = "a to b"
