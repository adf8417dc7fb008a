import type { RequestListener } from 'node:http';

/** How far from now a signed request may be dated, either way (Slack's own rule). */
export const REQUEST_WINDOW_SECONDS = 5 * 60;

/**
 * Refuses (401) a request whose `x-slack-request-timestamp` is more than five minutes away
 * from now, in either direction, before Bolt sees it: Bolt's HTTPReceiver refuses only old
 * ones, so a correctly signed request dated in the future could be replayed until then.
 * A request without the header is left to Bolt, which refuses it.
 */
export function withinRequestWindow(listener: RequestListener, onRefused: (skewSeconds: number) => void, now: () => number = Date.now): RequestListener {
  return (req, res) => {
    const header = req.headers['x-slack-request-timestamp'];
    const sent = typeof header === 'string' && /^\d+$/.test(header) ? Number(header) : undefined;
    const skew = sent === undefined ? 0 : sent - now() / 1000;
    if (Math.abs(skew) > REQUEST_WINDOW_SECONDS) {
      onRefused(Math.round(skew));
      res.writeHead(401).end();
      return;
    }
    listener(req, res);
  };
}
