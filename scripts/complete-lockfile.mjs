// The registry mirror these machines use serves only some platform builds of biome and rollup,
// so `npm install` leaves the others out of package-lock.json and `npm ci` then refuses the lock
// as out of sync. This adds an entry for each missing optional platform package (version, os,
// cpu, libc, read from its name), which npm ci skips on a non-matching machine and fetches on a
// matching one. Run it after `npm install` changes the lockfile.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const OS = ['android', 'darwin', 'freebsd', 'openbsd', 'openharmony', 'win32', 'linux', 'sunos', 'aix', 'netbsd'];
const CPU = {
  x64: 'x64',
  arm64: 'arm64',
  ia32: 'ia32',
  arm: 'arm',
  loong64: 'loong64',
  ppc64: 'ppc64',
  riscv64: 'riscv64',
  s390x: 's390x',
};
let added = 0;
for (const [key, pkg] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(pkg.optionalDependencies ?? {})) {
    const where = `node_modules/${name}`;
    if (lock.packages[where] || lock.packages[`${key}/${where}`]) continue;
    const parts = name.split('/').pop().split('-');
    const os = OS.find((o) => parts.includes(o));
    const cpu = Object.keys(CPU).find(
      (c) => parts.includes(c) || parts.some((p) => p.startsWith(c) && p !== c && c === 'arm'),
    );
    if (!os || !cpu) continue;
    const entry = { version, cpu: [CPU[cpu]], dev: true, license: pkg.license, optional: true, os: [os] };
    if (parts.some((p) => p.startsWith('musl'))) entry.libc = ['musl'];
    else if (os === 'linux' && parts.some((p) => p.startsWith('gnu'))) entry.libc = ['glibc'];
    lock.packages[where] = entry;
    added += 1;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform entries`);
