#!/usr/bin/env python3
"""How much work Redis does per decision in the limiter's scripts, counted in machine instructions.

Time measured on a shared two-core machine moves by half between identical rounds; the number of instructions Redis
executes for the same calls does not. This runs the embedded Redis 6.2 binary (the tests' own, from the Maven
repository) under valgrind's cachegrind, sends it the calls a JVM would send (EVALSHA of the composed deciding
script, one or several decisions per call), and reports the instructions per decision: two runs, of N and 2N calls,
and their difference divided by the decisions of N calls, so that startup and the warm-up pass cancel out.

Needs python3, unzip and valgrind (apt-get install valgrind unzip). Usage:

    scripts/script-cost.py                         # the working tree's scripts
    scripts/script-cost.py --base /path/to/lua     # and another set of scripts (for example a worktree's), side by side
    scripts/script-cost.py --functions             # EVALSHA against FCALL of the same files as a Redis 7 function
                                                   # library, on the Redis 7.0.15 of org.signal:embedded-redis

Workloads: 'new', every decision on a key never seen; 'existing', on keys that hold state (1,000 of them, created by a
warm-up pass). Limits are large enough that every decision is allowed. The floor is the benchmark harness's
(INCR, and PEXPIRE on a new key).
"""
import argparse
import glob
import os
import re
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LUA = os.path.join(ROOT, 'limiter-core/src/main/resources/META-INF/limiter/lua')
FLOOR = ("local c = redis.call('INCR', KEYS[1]) "
         "if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return c")

# Each algorithm's file and the parameters its limit sends (as the Java classes' scriptParameters build them): a
# token bucket of 1,000,000 permits refilled at 1 per second (one tick per microsecond), windows of an hour.
ALGORITHMS = {
    'token bucket': ('gcra.lua', ['gc', '5', '1000000', '1000000', '1000000', '-1', '1']),
    'fixed window': ('fixed_window.lua', ['fw', '2', '1000000000', '3600000000']),
    'sliding counter': ('sliding_window_counter.lua', ['sc', '2', '1000000000', '3600000000']),
    'sliding log': ('sliding_window_log.lua', ['sl', '2', '1000000', '3600000000']),
}


def resp(*args):
    out = [b'*%d\r\n' % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b'$%d\r\n%s\r\n' % (len(a), a))
    return b''.join(out)


def admitted(answer):
    """Whether every decision of a deciding script's reply was allowed: its text (the time, then five integers per
    limit, the first of them 1 when allowed), or the array the scripts answered before (measured with --base)."""
    values = [int(v) for v in answer.split()] if isinstance(answer, bytes) else answer
    return all(v == 1 for v in values[1::5])


class Connection:
    def __init__(self, port):
        self.sock = socket.create_connection(('127.0.0.1', port))
        self.buf = b''

    def _line(self):
        while b'\r\n' not in self.buf:
            data = self.sock.recv(1 << 20)
            if not data:
                raise OSError('Redis closed the connection')
            self.buf += data
        i = self.buf.index(b'\r\n')
        line, self.buf = self.buf[:i], self.buf[i + 2:]
        return line

    def _bulk(self, n):
        while len(self.buf) < n + 2:
            data = self.sock.recv(1 << 20)
            if not data:
                raise OSError('Redis closed the connection')
            self.buf += data
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b'-':
            raise RuntimeError(rest.decode())
        if kind == b'+':
            return rest.decode()
        if kind == b':':
            return int(rest)
        if kind == b'$':
            n = int(rest)
            return None if n < 0 else self._bulk(n)
        if kind == b'*':
            return [self.reply() for _ in range(int(rest))]
        raise RuntimeError('unexpected reply ' + repr(line))

    def send(self, commands):
        self.sock.sendall(b''.join(commands))
        return [self.reply() for _ in commands]


REDIS7_JAR = '~/.m2/repository/org/signal/embedded-redis/0.9.1/embedded-redis-0.9.1.jar'


def redis7_binary():
    """Redis 7.0.15 from org.signal:embedded-redis (a static binary), fetched into ~/.m2 by Maven if missing."""
    jar = os.path.expanduser(REDIS7_JAR)
    if not os.path.exists(jar):
        subprocess.run([os.path.join(ROOT, 'mvnw'), '-q', 'dependency:get', '-Dtransitive=false',
                        '-Dartifact=org.signal:embedded-redis:0.9.1'], check=True, cwd=ROOT)
    target = '/tmp/limiter-script-cost/redis-server-7'
    if not os.path.exists(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        subprocess.run(['unzip', '-o', '-q', '-j', jar, 'redis-server-7.0.15-linux-amd64', '-d',
                        os.path.dirname(target)], check=True)
        os.rename(os.path.join(os.path.dirname(target), 'redis-server-7.0.15-linux-amd64'), target)
        os.chmod(target, 0o755)
    return target


def redis_binary():
    if FUNCTIONS:
        return redis7_binary()
    jars = glob.glob(os.path.expanduser('~/.m2/repository/com/github/codemonstur/embedded-redis/*/embedded-redis-*.jar'))
    if not jars:
        sys.exit('embedded-redis is not in ~/.m2: run ./mvnw verify (or any build of limiter-core) first')
    target = '/tmp/limiter-script-cost/redis-server'
    if not os.path.exists(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        subprocess.run(['unzip', '-o', '-q', '-j', sorted(jars)[-1], 'redis-server-6.2.6-v5-linux-amd64', '-d',
                        os.path.dirname(target)], check=True)
        os.rename(os.path.join(os.path.dirname(target), 'redis-server-6.2.6-v5-linux-amd64'), target)
        os.chmod(target, 0o755)
    return target


def compose(lua_dir, algorithm_file):
    # As io.github.limiter.backend.redis.LimiterScript composes the deciding script of calls that only acquire and
    # check single limits. Scripts from before the general flag ignore its line.
    files = ['common.lua', algorithm_file] + (['time.lua'] if os.path.exists(os.path.join(lua_dir, 'time.lua')) else [])
    return 'local general = false\n' + ''.join(
        open(os.path.join(lua_dir, f)).read() + '\n' for f in files + ['decide.lua'])


def library(lua_dir, algorithm_file):
    """The same files as compose() as a Redis 7 function library, 'decide': the definitions run once, when the library
    loads; what a call must start afresh (its time, whether it is virtual, the key cache) runs in the function. A
    measurement only: the backends send EVALSHA."""
    common = open(os.path.join(lua_dir, 'common.lua')).read()
    for per_call in ("local virtual_time = ARGV[1] ~= ''", 'local kv_values = {}', 'local kv_writes = {}'):
        if per_call not in common:
            sys.exit('common.lua no longer has %r: update library() in %s' % (per_call, __file__))
        common = common.replace(per_call, per_call.split(' =')[0])
    call = ("virtual_time = ARGV[1] ~= ''\nkv_values = {}\nkv_writes = {}\n"
            + open(os.path.join(lua_dir, 'time.lua')).read() + '\n' + open(os.path.join(lua_dir, 'decide.lua')).read())
    return ('#!lua name=limiter_cost\nlocal general = false\n' + common + '\n'
            + open(os.path.join(lua_dir, algorithm_file)).read()
            + "\nredis.register_function('decide', function(KEYS, ARGV)\n" + call + '\nend)\n')


FLOOR_LIBRARY = ("#!lua name=floor\nredis.register_function('decide', function(KEYS, ARGV) " + FLOOR + ' end)')

# Set by --functions: Redis 7, and load() and the calls use FUNCTION LOAD and FCALL when a source is a library.
FUNCTIONS = False


def load(connection, source):
    """Loads a script (SCRIPT LOAD, for EVALSHA by its SHA-1) or a library (FUNCTION LOAD, for FCALL 'decide')."""
    if source.startswith('#!lua'):
        connection.send([resp('FUNCTION', 'LOAD', source)])
        return None
    return connection.send([resp('SCRIPT', 'LOAD', source)])[0].decode()


def decision_call(sha, params, batch, first_key, key_count, prefix, floor, short=False):
    keys = ['%s:%d' % (prefix, (first_key + j) % key_count) for j in range(batch)]
    command = ('EVALSHA', sha) if sha else ('FCALL', 'decide')
    if floor:
        return resp(*command, 1, keys[0], '3600000')
    argv = [''] + params
    for j in range(batch):
        # A token only for the sliding log, whose members it names, as the JVM sends it.
        if params[0] == 'sl':
            argv += ['a', 't%d' % (first_key + j), '1', '1', '1']
        elif short:
            argv += ['A', '1']
        else:
            argv += ['a', '', '1', '1', '1']
    return resp(*command, len(keys), *keys, *argv)


def instructions(source, params, batch, calls, workload, floor, port):
    out = '/tmp/limiter-script-cost/cachegrind.%d' % port
    server = subprocess.Popen(['valgrind', '--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=' + out,
                               redis_binary(), '--port', str(port), '--save', '', '--appendonly', 'no'],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(600):
            try:
                connection = Connection(port)
                break
            except OSError:
                time.sleep(0.1)
        else:
            sys.exit('Redis under valgrind did not start on port %d' % port)
        sha = load(connection, source)
        existing = workload == 'existing'
        # The two-argument form of the common decision ('A', limit), as ScriptCall sends it, to the drivers that take it.
        short = "op == 'A'" in source
        key_count = 1000 if existing else 1 << 40
        if existing:
            for start in range(0, key_count, 200):
                connection.send([decision_call(sha, params, 1, k, key_count, 'w', floor, short)
                                 for k in range(start, start + 200)])
        position, done = 0, 0
        while done < calls:
            chunk = min(200, calls - done)
            commands = []
            for _ in range(chunk):
                commands.append(decision_call(sha, params, batch, position, key_count, 'w', floor, short))
                position += batch
            for answer in connection.send(commands):
                if not floor and not admitted(answer):
                    sys.exit('a decision was rejected; the benchmark limits should admit every call: %r' % answer)
            done += chunk
        try:
            connection.send([resp('SHUTDOWN', 'NOSAVE')])
        except OSError:
            pass
    finally:
        server.wait(timeout=120)
    report = server.stderr.read().decode()
    found = re.search(r'I\s+refs:\s+([\d,]+)', report)
    if not found:
        sys.exit('valgrind reported no instruction count:\n' + report)
    return int(found.group(1).replace(',', ''))


def per_decision(source, params, batch, workload, decisions, port, floor=False):
    calls = max(1, decisions // batch)
    once = instructions(source, params, batch, calls, workload, floor, port)
    twice = instructions(source, params, batch, 2 * calls, workload, floor, port)
    return (twice - once) / (calls * batch)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--base', help='a directory of Lua scripts to compare with the working tree\'s')
    parser.add_argument('--lua', default=LUA, help='the Lua scripts to measure (default: the working tree\'s)')
    parser.add_argument('--batches', default='1,8', help='decisions per script call (default 1,8)')
    parser.add_argument('--workloads', default='new,existing')
    parser.add_argument('--algorithms', default=','.join(ALGORITHMS))
    parser.add_argument('--port', type=int, default=42590, help='the port of the Redis it starts (default 42590)')
    parser.add_argument('--decisions', type=int, default=4000,
                        help='decisions measured per figure (default 4,000; more averages over more of Lua\'s garbage '
                             'collection cycles, which move a figure by a few percent)')
    parser.add_argument('--functions', action='store_true',
                        help='measure EVALSHA against FCALL of the same files as a function library, on Redis 7.0.15')
    args = parser.parse_args()
    if subprocess.run(['which', 'valgrind'], capture_output=True).returncode != 0:
        sys.exit('valgrind is not installed (apt-get install valgrind)')
    if args.functions and args.base:
        sys.exit('--functions compares two ways of calling one set of scripts: leave out --base')
    global FUNCTIONS
    FUNCTIONS = args.functions
    # Each set: its name, the source of an algorithm's deciding script, the floor's source.
    if args.functions:
        sets = [('EVALSHA', lambda f: compose(args.lua, f), FLOOR),
                ('FCALL', lambda f: library(args.lua, f), FLOOR_LIBRARY)]
    else:
        dirs = ([('base', args.base)] if args.base else []) + [('this tree' if args.lua == LUA else args.lua, args.lua)]
        sets = [(name, lambda f, d=d: compose(d, f), FLOOR) for name, d in dirs]
    compared = len(sets) == 2
    batches = [int(b) for b in args.batches.split(',')]
    header = '| algorithm | workload | decisions per call | ' + ' | '.join(name for name, _, _ in sets)
    print(header + (' | change |' if compared else ' |'))
    print('|---' * (3 + len(sets) + (1 if compared else 0)) + '|')

    def row(name, workload, batch, counts):
        line = '| %s | %s | %d | %s |' % (name, workload, batch, ' | '.join('%.0f' % c for c in counts))
        if compared:
            line += ' %+.1f%% |' % (100.0 * (counts[1] - counts[0]) / counts[0])
        print(line, flush=True)

    for workload in args.workloads.split(','):
        floors = {}
        for _, _, floor in sets:
            if floor not in floors:
                floors[floor] = per_decision(floor, [], 1, workload, args.decisions, args.port, floor=True)
        row('floor (INCR, PEXPIRE)', workload, 1, [floors[floor] for _, _, floor in sets])
        for name in args.algorithms.split(','):
            algorithm_file, params = ALGORITHMS[name.strip()]
            for batch in batches:
                row(name, workload, batch, [per_decision(source(algorithm_file), params, batch, workload,
                                                         args.decisions, args.port) for _, source, _ in sets])

if __name__ == '__main__':
    main()
