#!/usr/bin/env python3
"""Where the whole machine spends its time while one contender of the Redis load harness runs alone.

The harness reports Redis's CPU and the JVM's per decision; on a two-core machine where Redis, the client's I/O
thread and the callers share the cores, what decides throughput is how the machine's time divides between them. This
runs the harness with one contender alone (`--alone`), and while it measures, samples every CPU with `perf record`
and counts the system calls and context switches of the Redis process and of the JVM with `perf stat`. It prints,
per decision: the CPU time of Redis (its own code and libraries, and the kernel working for it), of the client's I/O
threads, of the callers, of the rest of the JVM, of other processes and the idle time; and the system calls.

Needs Linux perf (apt-get install linux-perf) and the right to sample every CPU (root, or perf_event_paranoid <= 0).
Usually run through scripts/benchmark.sh, which builds the benchmark module first:

    scripts/benchmark.sh profile "limiter token bucket" 8          # 10,000 keys, 8 callers
    scripts/benchmark.sh profile "floor: INCR + PEXPIRE" 8 hot     # the floor, one hot key

The contender's name is the harness's, in full. Set LIMITER_REDIS_SERVER to profile another redis-server binary.
"""
import argparse
import os
import re
import subprocess
import sys
import time

EVENTS = ['syscalls:sys_enter_read', 'syscalls:sys_enter_write', 'syscalls:sys_enter_writev',
          'syscalls:sys_enter_epoll_wait', 'syscalls:sys_enter_futex', 'sched:sched_switch']

IO_THREADS = ('lettuce-', 'redisson-', 'nioEventLoop', 'epollEventLoo', 'netty')


def thread_names(pid):
    names = set()
    try:
        for tid in os.listdir('/proc/%d/task' % pid):
            try:
                with open('/proc/%d/task/%s/comm' % (pid, tid)) as f:
                    names.add(f.read().strip())
            except OSError:
                pass
    except OSError:
        pass
    return names


def children_named(pid, name):
    out = subprocess.run(['pgrep', '-P', str(pid), name], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--classpath', required=True, help='the benchmark module\'s classes and dependencies')
    parser.add_argument('contender', help='the contender\'s full name, as the harness prints it')
    parser.add_argument('callers', type=int, nargs='?', default=8)
    parser.add_argument('workload', nargs='?', default='keys', choices=['keys', 'hot', 'flood'])
    parser.add_argument('--seconds', type=int, default=8, help='how long perf samples (default 8)')
    parser.add_argument('--out', default='limiter-benchmarks/target/machine-profile')
    args = parser.parse_args()

    os.makedirs(args.out, exist_ok=True)
    data = os.path.join(args.out, 'perf.data')
    harness = subprocess.Popen(
        ['java', '-XX:+UnlockDiagnosticVMOptions', '-XX:+DumpPerfMapAtExit', '-XX:+PreserveFramePointer',
         '-cp', args.classpath, 'io.github.limiter.benchmarks.redis.RedisLoadHarness', '--alone',
         '--only=' + args.contender, '--workloads=' + args.workload, '--callers=%d' % args.callers, '--warmup=4',
         '--measure=%d' % (args.seconds + 6), '--out=' + os.path.join(args.out, 'harness.md')],
        stdout=subprocess.PIPE, text=True)
    result = None
    stats, jvm_threads = [], set()
    for line in harness.stdout:
        sys.stdout.write(line)
        if line.startswith('measuring '):
            time.sleep(2)
            redis = children_named(harness.pid, 'redis-server')
            if len(redis) != 1:
                harness.kill()
                sys.exit('expected one redis-server started by the harness, found %s' % redis)
            jvm_threads = thread_names(harness.pid)
            stats = []
            for who, pid in (('redis', redis[0]), ('jvm', harness.pid)):
                out = os.path.join(args.out, who + '.stat')
                stats.append((who, out, subprocess.Popen(
                    ['perf', 'stat', '-x', ',', '-e', ','.join(EVENTS), '-p', str(pid), '-o', out, '--', 'sleep',
                     str(args.seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
            record = subprocess.run(['perf', 'record', '-e', 'cpu-clock', '-F', '999', '-a', '-g', '-o', data, '--',
                                     'sleep', str(args.seconds)], capture_output=True, text=True)
            if record.returncode != 0:
                harness.kill()
                sys.exit('perf record failed: ' + record.stderr.strip())
            for _, _, process in stats:
                process.wait()
            jvm_threads |= thread_names(harness.pid)
        elif result is None and line.split()[:1] == [args.workload] and args.contender in line:
            match = re.search(r'([\d,]+)/s', line)
            result = float(match.group(1).replace(',', ''))
    if harness.wait() != 0 or result is None:
        sys.exit('the harness failed, or measured nothing')
    summarise(args, data, stats, jvm_threads, result)


def summarise(args, data, stats, jvm_threads, rate):
    cpus = os.cpu_count()
    report = subprocess.run(['perf', 'report', '-i', data, '--stdio', '--sort', 'comm,dso', '--no-children', '-g',
                             'none'], capture_output=True, text=True).stdout
    parts = {}
    for line in report.splitlines():
        match = re.match(r'\s*([\d.]+)%\s+(.+?)\s{2,}(\S.*?)\s*$', line)
        if not match:
            continue
        share, comm, dso = float(match.group(1)), match.group(2).strip(), match.group(3)
        kernel = dso.startswith('[kernel')
        if comm == 'redis-server':
            part = 'Redis, in the kernel' if kernel else 'Redis, its own code and libraries'
        elif comm == 'swapper':
            part = 'idle'
        elif comm in jvm_threads and comm == 'caller':
            part = 'JVM: the callers'
        elif comm in jvm_threads and comm.startswith(IO_THREADS):
            part = 'JVM: the client\'s I/O threads'
        elif comm in jvm_threads:
            part = 'JVM: everything else (compiler, GC, timers)'
        else:
            part = 'other processes'
        parts[part] = parts.get(part, 0.0) + share
    per_decision = cpus * 1e6 / rate / 100
    print()
    print('%s, %s, %d callers: %s decisions/s; %d CPUs sampled for %d s' % (
        args.contender, args.workload, args.callers, format(round(rate), ','), cpus, args.seconds))
    print()
    print('| part | share of the machine | µs per decision |')
    print('|---|---|---|')
    for part in ('Redis, its own code and libraries', 'Redis, in the kernel', 'JVM: the client\'s I/O threads',
                 'JVM: the callers', 'JVM: everything else (compiler, GC, timers)', 'other processes', 'idle'):
        share = parts.get(part, 0.0)
        print('| %s | %.1f%% | %.2f |' % (part, share, share * per_decision))
    print()
    print('| system calls and switches per decision | Redis | JVM |')
    print('|---|---|---|')
    counts = {}
    for who, out, _ in stats:
        with open(out) as f:
            for line in f:
                fields = line.strip().split(',')
                if len(fields) > 2 and fields[2] in EVENTS and fields[0].isdigit():
                    counts[(who, fields[2])] = int(fields[0])
    for event in EVENTS:
        print('| %s | %.2f | %.2f |' % (event.split(':')[1].replace('sys_enter_', ''),
                                        counts.get(('redis', event), 0) / (rate * args.seconds),
                                        counts.get(('jvm', event), 0) / (rate * args.seconds)))


if __name__ == '__main__':
    main()
