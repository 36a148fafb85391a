class A:
    def f(self):
        return a

    def g(self):
        pass
