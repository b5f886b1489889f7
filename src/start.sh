#!/bin/sh
# What `npm start` runs (and the benchmarks' servers): the server with its allocator's settings, each only
# when the environment has none.
#
# jemalloc when the system has it (Debian and Ubuntu: `apt-get install libjemalloc2`; Fedora: `dnf install
# jemalloc`): LanceDB's searches spent a sixth of their CPU in glibc's malloc and free, and with jemalloc
# hybrid recall at concurrency 8 ran about 8% faster at 100k memories (README, Memory, Allocator). Its
# settings hold memory at or below glibc's below: two arenas; freed pages returned after a second by a
# background thread, so an idle server returns them too; blocks over 128 KiB (LanceDB's batches) from an
# arena that returns them when freed, as glibc's threshold does (without it 10k memories written through
# the API left 150 MB more). LD_PRELOAD set, even empty, is the operator's.
if [ -z "${LD_PRELOAD+set}" ]; then
  for lib in "/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2" /usr/lib64/libjemalloc.so.2 /usr/lib/libjemalloc.so.2; do
    if [ -r "$lib" ]; then
      export LD_PRELOAD="$lib"
      break
    fi
  done
fi
export MALLOC_CONF="${MALLOC_CONF:-background_thread:true,narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0,oversize_threshold:131072}"
# glibc's, when jemalloc is not preloaded: two arenas, and blocks over 128 KiB mapped on their own and
# returned when freed, so memory LanceDB frees leaves the process (README, Memory).
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-131072}"
export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-131072}"
exec node --import tsx src/main.ts "$@"
