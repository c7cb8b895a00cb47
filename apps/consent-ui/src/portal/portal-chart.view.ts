import type { EndpointHour } from '@svc/contracts';
import { html, type SafeHtml } from '../views/html';

const WIDTH = 240;
const HEIGHT = 64;
const BAR = WIDTH / 24;

/** "14:00 UTC" of an ISO hour. */
export function hourLabel(iso: string): string {
  return `${iso.slice(11, 16)} UTC`;
}

/**
 * Attempts per hour over the last 24 hours, as inline SVG (no script, nothing fetched): each bar
 * is the hour's attempts, its lower part the acknowledged ones. The SVG is one image with a title
 * and a summary; the table after it says the same hour by hour, for screen readers and anyone who
 * prefers numbers.
 */
export function attemptsChart(hours: readonly EndpointHour[]): SafeHtml {
  const max = Math.max(1, ...hours.map((h) => h.attempts));
  const total = hours.reduce((n, h) => n + h.attempts, 0);
  const ok = hours.reduce((n, h) => n + h.successes, 0);
  const busiest = hours.reduce<EndpointHour | undefined>(
    (b, h) => (!b || h.attempts > b.attempts ? h : b),
    undefined,
  );
  const summary =
    total === 0
      ? 'No attempts in the last 24 hours.'
      : `${total} attempts in the last 24 hours, ${ok} acknowledged and ${total - ok} failed; ` +
        `the busiest hour was ${busiest ? hourLabel(busiest.hour) : ''} with ${busiest?.attempts ?? 0}.`;
  // Each hour's attempts, and over them its acknowledged ones.
  const bar = (tone: string, i: number, count: number) => {
    const height = (count / max) * (HEIGHT - 4);
    return html`<rect
      class="bar-${tone}"
      x="${(i * BAR + 1).toFixed(1)}"
      y="${(HEIGHT - height).toFixed(1)}"
      width="${(BAR - 2).toFixed(1)}"
      height="${height.toFixed(1)}"
    ></rect>`;
  };
  const bars = hours.map((h, i) => html`${bar('failed', i, h.attempts)}${bar('ok', i, h.successes)}`);
  return html`<figure class="chart">
    <svg
      viewBox="0 0 ${WIDTH} ${HEIGHT}"
      role="img"
      aria-labelledby="chart-title chart-summary"
      focusable="false"
    >
      <title id="chart-title">Attempts per hour, last 24 hours</title>
      <desc id="chart-summary">${summary}</desc>
      <line class="axis" x1="0" y1="${HEIGHT - 0.5}" x2="${WIDTH}" y2="${HEIGHT - 0.5}"></line>
      ${bars}
    </svg>
    <figcaption>
      <span class="key key-ok">Acknowledged</span> <span class="key key-failed">Failed</span>. ${summary}
    </figcaption>
    <details>
      <summary>Attempts per hour as a table</summary>
      <table class="hours">
        <caption>
          Attempts to your endpoint per hour (UTC), oldest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Hour</th>
            <th scope="col">Attempts</th>
            <th scope="col">Acknowledged</th>
          </tr>
        </thead>
        <tbody>
          ${hours.map(
            (h) =>
              html`<tr>
                <th scope="row"><time datetime="${h.hour}">${hourLabel(h.hour)}</time></th>
                <td>${h.attempts}</td>
                <td>${h.successes}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </details>
  </figure>`;
}
