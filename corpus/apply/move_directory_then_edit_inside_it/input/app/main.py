print("old")
