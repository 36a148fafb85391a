class A:
    def f(self):
        return 1
