func f() {
	if a {
		go()
	}
}
