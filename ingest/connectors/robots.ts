/**
 * robots.txt as crawlers read it (RFC 9309): the group for our user agent, else `*`; a path is
 * allowed unless the longest matching rule disallows it (`*` and `$` in rules); `Crawl-delay`
 * when given. A missing file (4xx) allows everything; an unreachable one (5xx) disallows
 * everything, as the RFC says.
 */
export interface Robots {
  allowed(path: string): boolean;
  /** Seconds between requests the site asks for, or null. */
  crawlDelay: number | null;
}

interface Rule {
  allow: boolean;
  pattern: RegExp;
  length: number;
}

export const ALLOW_ALL: Robots = { allowed: () => true, crawlDelay: null };
export const DISALLOW_ALL: Robots = { allowed: () => false, crawlDelay: null };

export function parseRobots(text: string, agent: string): Robots {
  const groups: { agents: string[]; rules: Rule[]; delay: number | null }[] = [];
  let current: (typeof groups)[number] | null = null;
  let lastWasAgent = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, '').trim();
    const m = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1].toLowerCase();
    const value = m[2].trim();
    if (key === 'user-agent') {
      if (!current || !lastWasAgent) groups.push((current = { agents: [], rules: [], delay: null }));
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (!current) continue;
    if ((key === 'allow' || key === 'disallow') && value !== '') current.rules.push({ allow: key === 'allow', pattern: rulePattern(value), length: value.length });
    if (key === 'crawl-delay' && Number.isFinite(Number(value))) current.delay = Number(value);
  }
  const name = agent.toLowerCase();
  const group = groups.find((g) => g.agents.some((a) => a !== '*' && name.includes(a))) ?? groups.find((g) => g.agents.includes('*'));
  if (!group) return ALLOW_ALL;
  return {
    crawlDelay: group.delay,
    allowed(path: string) {
      let best: Rule | null = null;
      for (const r of group.rules) if (r.pattern.test(path) && (!best || r.length > best.length || (r.length === best.length && r.allow))) best = r;
      return best === null || best.allow;
    },
  };
}

function rulePattern(rule: string): RegExp {
  const anchored = rule.endsWith('$');
  const body = (anchored ? rule.slice(0, -1) : rule).replace(/[.+?^{}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${body}${anchored ? '$' : ''}`);
}
