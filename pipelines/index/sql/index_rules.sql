-- The index's rules (one row): intermediate.int_index_rules is their one home, and names them.
select * from intermediate.int_index_rules
