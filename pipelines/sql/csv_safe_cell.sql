-- csv_safe_cell(cell): one text cell of a CSV feed as a spreadsheet may safely open it
-- (pipelines/feed_cells.py says why; docs/robustness.md, "Hostile input", has the rule):
--   1. A cell a spreadsheet would read as a formula gets a leading apostrophe: it starts with
--      = + - @ (or the full-width ＝ ＋ － ＠), a tab or a carriage return, unless it is a plain
--      negative number such as -2.5 (OWASP's CSV injection rule).
--   2. Tab, line feed, vertical tab, form feed, carriage return, U+2028 and U+2029 become a
--      space (a cell stays on one line, also for readers that split lines first); every other
--      C0 or C1 control character, DEL, and the bidi overrides and isolates U+202A-U+202E and
--      U+2066-U+2069 become U+FFFD '�' (visible; nothing executes, nothing reorders the text).
--   3. A cell of more than 1,000 characters keeps its first 988, then '…[truncated]' (1,000).
-- A null stays null (an empty field). The lambda evaluates 1 and 2 once per cell for 3.
create or replace temp macro csv_safe_cell(cell) as (
    list_transform(
        [
            case
                when regexp_matches(cell, '^[=+\-@\t\r＝＋－＠]')
                    and not regexp_full_match(cell, '-[0-9]+(\.[0-9]+)?')
                    then ''''
                else ''
            end
            || regexp_replace(
                regexp_replace(cell, '[\t\n\x0b\x0c\r\x{2028}\x{2029}]', ' ', 'g'),
                '[\x00-\x08\x0e-\x1f\x7f-\x9f\x{202A}-\x{202E}\x{2066}-\x{2069}]', '�', 'g'
            )
        ],
        lambda safe: case
            when length(safe) > 1000 then left(safe, 988) || '…[truncated]'
            else safe
        end
    )[1]
)
