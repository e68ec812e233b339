import sys, time, cProfile, pstats, statistics
from memory.api import Memory
m = Memory(sys.argv[1])
def t(f, n=20):
    xs=[]
    for _ in range(n):
        s=time.perf_counter(); f(); xs.append((time.perf_counter()-s)*1000)
    return statistics.median(xs)
print("ground", t(lambda: m.query_logic("edge(5, 10)")))
print("bound", t(lambda: m.query_logic("edge(5, X)")))
print("path", t(lambda: m.query_logic("path(5, X)")))
print("explain", t(lambda: m.explain_why("path(5, 9)")))
def after():
    m.remember_fact(f"note({time.time_ns()})"); m.query_logic("edge(5, X)")
print("after write", t(after))
if len(sys.argv) > 2:
    cProfile.run(sys.argv[2], "/tmp/prof/out")
    pstats.Stats("/tmp/prof/out").sort_stats("cumtime").print_stats(25)
