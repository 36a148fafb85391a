alpha = compute(1)
beta = 2
