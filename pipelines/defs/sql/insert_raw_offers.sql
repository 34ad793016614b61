-- Every line of a passing crawl's JSONL file, its JSON text kept as the spider wrote it, numbered
-- from 0 in file order. DuckDB reads the file itself; a malformed line fails the whole load.
insert into raw.offers (crawl_id, item_no, source, item)
select
    $crawl_id as crawl_id,
    ordinality - 1 as item_no,
    $source as source,
    json as item
from read_ndjson_objects($items_path, maximum_object_size = $max_line_bytes) with ordinality
