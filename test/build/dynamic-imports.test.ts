/**
 * The build routes every import() of dist/ through `__hobI` (scripts/dynamic-imports.mjs): one
 * left as it was would fail the moment it runs in a module compiled from a code cache ("A
 * dynamic import callback was not specified"), so a missed one is a hob that breaks on its
 * second start, in whatever feature loads that chunk.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { init, parse } from 'es-module-lexer';
import { describe, expect, it } from 'vitest';
import { bundleOptions } from '../../scripts/build.mjs';
import { IMPORT_BANNER, routeDynamicImports } from '../../scripts/dynamic-imports.mjs';
import { tempDir } from '../support/temp-dirs.js';

const DIST = join(import.meta.dirname, '../../dist');
const BANNER = String((bundleOptions({}, 'unused').banner as { js: string }).js);

/** The import() calls es-module-lexer finds in `source` after the banner. */
async function dynamicImportsAfterBanner(source: string): Promise<number> {
  await init;
  const after = source.indexOf(IMPORT_BANNER) + IMPORT_BANNER.length;
  return parse(source)[0].filter((entry) => entry.d > -1 && entry.ss >= after).length;
}

describe('import() in dist/', () => {
  it('is routed in every file of the build, and nothing else there is', async () => {
    const files = readdirSync(DIST).filter((name) => name.endsWith('.js'));
    let routed = 0;
    for (const name of files) {
      const source = readFileSync(join(DIST, name), 'utf8');
      expect(source.includes(IMPORT_BANNER), name).toBe(true);
      expect(await dynamicImportsAfterBanner(source), name).toBe(0);
      routed += source.split('__hobI(').length - 1;
    }
    // The channels, the providers, the commands: dozens of chunks hob loads when it needs them.
    expect(routed).toBeGreaterThan(30);
  });

  it('rewrites calls only, in place: strings, templates, regular expressions and comments keep theirs, every column stays', async () => {
    const dir = tempDir('hob-dynamic-imports-');
    const body = [
      'const text = "import(\'./a.js\')";',
      'const template = `import(${text})`;',
      'const pattern = /import\\(/;',
      "// import('./b.js')",
      "const chunk = await import('./c.js');",
      'const named = await import(name, { with: { type: "json" } });',
    ].join('\n');
    writeFileSync(join(dir, 'chunk.js'), `${BANNER}\n${body}`);
    expect(await routeDynamicImports(dir)).toBe(2);
    const out = readFileSync(join(dir, 'chunk.js'), 'utf8');
    expect(out.length).toBe(`${BANNER}\n${body}`.length);
    expect(out.slice(BANNER.length + 1)).toBe(body.replace("await import('./c.js')", "await __hobI('./c.js')").replace('await import(name', 'await __hobI(name'));
  });

  it('refuses a file the banner is missing from, naming the file', async () => {
    const dir = tempDir('hob-dynamic-imports-');
    writeFileSync(join(dir, 'bare.js'), "await import('./x.js');");
    await expect(routeDynamicImports(dir)).rejects.toThrow(/bare\.js: the banner that defines __hobI is missing/);
  });
});
