#!/usr/bin/env python3
"""The first call after an idle second, against the next one, on a running sample application (issue 14).

Usage: scripts/idle-latency.py [port]   (the sample on its embedded Redis: java -jar limiter-sample-app/target/*.jar)
Warms the JVM with 6,000 requests on one kept-alive connection, then, for each path, 8 times: sleeps 1.1 s, times
one request, then times the next one at once. /api/quote with a partner's key is skipped by the limit's condition
(no decision), /actuator/health decides nothing, /leaky/nodelay is decided by Redis.
"""
import http.client
import sys
import time

port = int(sys.argv[1]) if len(sys.argv) > 1 else 8080
connection = http.client.HTTPConnection('127.0.0.1', port)


def get(path):
    start = time.perf_counter()
    connection.request('GET', path, headers={'X-Api-Key': 'partner-demo-key'})
    response = connection.getresponse()
    response.read()
    return (time.perf_counter() - start) * 1000


for _ in range(3000):
    get('/actuator/health')
    get('/api/quote')
for path in ['/api/quote', '/actuator/health', '/leaky/nodelay']:
    idle, next_ = [], []
    for _ in range(8):
        time.sleep(1.1)
        idle.append(get(path))
        next_.append(get(path))
    print(f'{path:18s} after an idle second: median {sorted(idle)[4]:5.2f} ms   next call: median {sorted(next_)[4]:5.2f} ms')
