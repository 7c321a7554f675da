/** Previous and Next over a list the service pages by offset (sources, jobs, schedules), with where the page is. */
import { count } from '../format.js';

interface Props {
  /** What the list holds, for the nav's name: "Pages of <what>". */
  what: string;
  offset: number;
  size: number;
  total: number;
  onOffset: (offset: number) => void;
}

export function OffsetPager({ what, offset, size, total, onOffset }: Props) {
  if (total <= size && offset === 0) return null;
  const last = Math.min(offset + size, total);
  return (
    <nav class="pager" aria-label={`Pages of ${what}`}>
      <button type="button" onClick={() => onOffset(Math.max(0, offset - size))} disabled={offset <= 0}>
        Previous
      </button>
      <span>{`${count(offset + 1)}–${count(last)} of ${count(total)} ${what}`}</span>
      <button type="button" onClick={() => onOffset(offset + size)} disabled={last >= total}>
        Next
      </button>
    </nav>
  );
}
