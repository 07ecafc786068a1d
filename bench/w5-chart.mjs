// W5's chart: the requests the fake accepted and refused per 100 ms, one line per subject, from the
// fake's request log (each request's arrival time). Drawn with Vega-Lite, rendered to SVG in Node.
import { writeFileSync } from 'node:fs';
import * as vega from 'vega';
import { compile } from 'vega-lite';

const BIN_MS = 100;

/**
 * One point per subject, answer and 100 ms bin, zeros included, so that a line falls to 0 where
 * nothing came rather than joining its neighbours across the gap. `runs`: subject -> { start, log },
 * with `start` the epoch ms when the calls began and `log` the fake's [receivedAt, status] pairs.
 */
function pointsOf(runs) {
  const points = [];
  for (const [subject, { start, log }] of Object.entries(runs)) {
    const last = log.reduce((latest, [at]) => Math.max(latest, at - start), 0);
    const bins = Math.floor(last / BIN_MS) + 1;
    const accepted = new Array(bins).fill(0);
    const refused = new Array(bins).fill(0);
    for (const [at, status] of log) {
      const bin = Math.floor(Math.max(0, at - start) / BIN_MS);
      if (status === 429) refused[bin] += 1;
      else if (status >= 200 && status < 300) accepted[bin] += 1;
    }
    for (let bin = 0; bin < bins; bin++) {
      const t = (bin * BIN_MS) / 1000;
      points.push({ subject, t, answer: 'accepted', count: accepted[bin] });
      points.push({ subject, t, answer: 'refused (429)', count: refused[bin] });
    }
  }
  return points;
}

/**
 * Writes the chart to `file` (an SVG). `limit`: the server's { perSecond, burst }, drawn as its
 * pace per bin; `creates`: the calls of a run, the most a bin can hold, which tops the 429 scale.
 */
export async function drawW5Chart(file, runs, { title, limit, creates }) {
  const subjects = Object.keys(runs);
  const x = { field: 't', type: 'quantitative', title: 'seconds since the calls started' };
  const color = {
    field: 'subject',
    type: 'nominal',
    sort: subjects,
    title: null,
    legend: { orient: 'top', labelLimit: 0, columns: 4 },
  };
  const line = { type: 'line', interpolate: 'step-after', strokeWidth: 1.5, opacity: 0.85 };
  const panel = (answer, y, extra = []) => ({
    width: 760,
    height: 190,
    title: { text: answer, anchor: 'start', fontSize: 12 },
    layer: [
      {
        transform: [{ filter: { field: 'answer', equal: answer } }],
        mark: line,
        encoding: { x, y: { field: 'count', type: 'quantitative', ...y }, color },
      },
      ...extra,
    ],
  });
  const pace = (limit.perSecond * BIN_MS) / 1000;
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, subtitle: 'requests per 100 ms as the fake received them; one run of each subject' },
    data: { values: pointsOf(runs) },
    config: { font: 'sans-serif', view: { stroke: null } },
    vconcat: [
      panel('accepted', { title: 'per 100 ms' }, [
        {
          data: { values: [{ pace }] },
          mark: { type: 'rule', strokeDash: [4, 4], color: 'gray' },
          encoding: { y: { field: 'pace', type: 'quantitative' } },
        },
        {
          data: { values: [{ pace, label: `the server's pace: ${pace} per 100 ms` }] },
          mark: { type: 'text', align: 'right', dy: -6, color: 'gray', x: 'width' },
          encoding: { y: { field: 'pace', type: 'quantitative' }, text: { field: 'label' } },
        },
      ]),
      // A log-like scale: a burst of thousands of refusals and a trickle of a few both show.
      panel('refused (429)', {
        title: 'per 100 ms (log scale)',
        scale: { type: 'symlog', domain: [0, creates] },
        axis: { values: [0, 1, 10, 100, 1000] },
      }),
    ],
  };
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  writeFileSync(file, await view.toSVG());
  view.finalize();
}
