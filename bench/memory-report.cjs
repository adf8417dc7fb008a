// Preloaded into the measured process by `bench/profile.ts memory` (node --require): on
// SIGUSR1 it writes where its resident memory is to <tmpdir>/hob-memory-<pid>.json — V8's
// heap spaces (used and committed), what V8 counts outside its heap (external, array
// buffers), and the resident kilobytes of each mapping of /proc/self/smaps grouped by file
// (anonymous mappings together: V8's heap and malloc's arenas). With BENCH_MEMORY_GC=1 it
// then runs a full collection and adds what is still live (`live`: heap used after it), so
// held objects tell apart from garbage not yet collected. Measuring only: hob never loads it.
const { readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');
const v8 = require('node:v8');
const vm = require('node:vm');

/** A full collection, when asked for (the flag is set before any context needs it). */
const collect = process.env.BENCH_MEMORY_GC === '1' ? (v8.setFlagsFromString('--expose-gc'), vm.runInNewContext('gc')) : undefined;

function mappings() {
  const byName = {};
  let name = '';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const path = head[1] || '(anonymous)';
      name = path.includes('/') ? path.slice(path.lastIndexOf('/') + 1) : path;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) byName[name] = (byName[name] || 0) + Number(rss[1]) * 1024;
  }
  return byName;
}

process.on('SIGUSR1', () => {
  const report = {
    usage: process.memoryUsage(),
    spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((space) => [space.space_name, { used: space.space_used_size, committed: space.physical_space_size }])),
    mappings: mappings(),
  };
  if (collect) {
    collect();
    report.live = process.memoryUsage().heapUsed;
    report.liveSpaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((space) => [space.space_name, space.space_used_size]));
  }
  // Written aside and renamed, so the reader never sees half of it.
  const file = join(tmpdir(), `hob-memory-${process.pid}.json`);
  writeFileSync(`${file}.part`, JSON.stringify(report));
  renameSync(`${file}.part`, file);
});
