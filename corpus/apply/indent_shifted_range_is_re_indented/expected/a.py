class A:
    def f(self):
        return b

    def g(self):
        pass
