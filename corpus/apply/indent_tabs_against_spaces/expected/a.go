func f() {
	if a {
		go(1)
	}
}
