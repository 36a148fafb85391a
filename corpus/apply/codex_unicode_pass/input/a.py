msg = “a — b”
