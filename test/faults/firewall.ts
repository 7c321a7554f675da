// Network faults on loopback with nftables (the design's §4.1 "Partitions"): a table of this
// process's own with one output chain, rules that silently drop (a cut: packets vanish, as on a
// broken link) or reset (a peer that is down) the TCP traffic to and from one address and port,
// healed by flushing the chain. Loopback traffic of both directions passes the output hook, so a
// rule per direction cuts a connection both ways. Needs root and nf_tables (CI has both);
// `firewallMissing` says why a suite cannot run where they are not.
import { execFileSync, spawnSync } from 'node:child_process';

function probe(): string | null {
  const r = spawnSync('nft', ['list', 'tables'], { encoding: 'utf8' });
  if (r.error) return `nft is not installed (${r.error.message}); apt-get install nftables`;
  if (r.status !== 0) return `nft cannot list tables here (${r.stderr.trim()}): the network fault tests need root and nf_tables`;
  return null;
}

export const firewallMissing: string | null = probe();

export class Firewall {
  private readonly table = `sable_faults_${process.pid}`;

  constructor() {
    this.nft('add', 'table', 'inet', this.table);
    this.nft('add', 'chain', 'inet', this.table, 'out', '{ type filter hook output priority 0; policy accept; }');
  }

  /** Packets to and from host:port vanish. */
  cut(host: string, port: number): void {
    this.nft('add', 'rule', 'inet', this.table, 'out', 'ip', 'daddr', host, 'tcp', 'dport', String(port), 'drop');
    this.nft('add', 'rule', 'inet', this.table, 'out', 'ip', 'saddr', host, 'tcp', 'sport', String(port), 'drop');
  }

  /**
   * Connections to host:port are refused at once (the peer is down). One direction only: the
   * reset the rule sends back comes from host:port, and a rule on that direction would drop it.
   */
  refuse(host: string, port: number): void {
    this.nft('add', 'rule', 'inet', this.table, 'out', 'ip', 'daddr', host, 'tcp', 'dport', String(port), 'reject', 'with', 'tcp', 'reset');
  }

  heal(): void {
    this.nft('flush', 'chain', 'inet', this.table, 'out');
  }

  remove(): void {
    try {
      this.nft('delete', 'table', 'inet', this.table);
    } catch {
      // already gone
    }
  }


  private nft(...args: string[]): void {
    execFileSync('nft', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  }
}
