x = 1
def g():
    pass
