def g():
    # begin
    # end
def f():
    # begin
    x = 1
    # end
done
