-- One truth.scenario row: seed, noise_pct, start_at, days, every_hours, offers, effects (JSON).
insert into {catalog}.truth.scenario
values (?, ?, ?::timestamptz, ?, ?, ?, ?::json, now())
