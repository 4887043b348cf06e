BEGIN TRANSACTION;
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
INSERT INTO "alembic_version" VALUES('0007');
CREATE TABLE "attempts" (
	id INTEGER NOT NULL, 
	campaign_id INTEGER NOT NULL, 
	trial_pk INTEGER NOT NULL, 
	seq INTEGER NOT NULL, 
	status VARCHAR(64) NOT NULL, 
	started_at DATETIME NOT NULL, 
	ended_at DATETIME, 
	outcome VARCHAR(64), 
	failure_class VARCHAR(64), 
	verified_pass BOOLEAN, 
	verifier_exit_code INTEGER, 
	wall_seconds FLOAT, 
	completed_turns INTEGER, 
	uncached_input_tokens INTEGER, 
	cached_input_tokens INTEGER, 
	cache_write_tokens INTEGER, 
	output_tokens INTEGER, 
	tool_calls INTEGER, 
	tool_errors INTEGER, 
	diagnostic_events_version INTEGER, 
	discovery_failures INTEGER, 
	incorrect_tool_calls INTEGER, 
	cost_usd FLOAT, 
	cost_reported BOOLEAN, 
	equivalent_spend_usd FLOAT, 
	spend_complete BOOLEAN, 
	flush_complete BOOLEAN, 
	cleanup_complete BOOLEAN, 
	disposal_complete BOOLEAN, 
	finalization_failed BOOLEAN, 
	teardown_outcome VARCHAR(64), 
	containment VARCHAR(64), 
	config_digest VARCHAR(64), 
	fixture_digest VARCHAR(64), 
	agent_model VARCHAR(128), 
	applied_profiles TEXT, 
	schema_diagnostics TEXT, 
	private_root TEXT, 
	prev_hash VARCHAR(64), 
	row_hash VARCHAR(64), 
	CONSTRAINT pk_attempts PRIMARY KEY (id), 
	CONSTRAINT fk_attempts_campaign_id_campaigns FOREIGN KEY(campaign_id) REFERENCES campaigns (id), 
	CONSTRAINT uq_attempts_campaign_id_seq UNIQUE (campaign_id, seq), 
	CONSTRAINT fk_attempts_trial_pk_trials FOREIGN KEY(trial_pk) REFERENCES trials (id), 
	CONSTRAINT ck_attempts_status CHECK (status IN ('running', 'finished', 'interrupted', 'faulted'))
);
INSERT INTO "attempts" VALUES(1,1,1,1,'finished','2026-12-06 20:21:42.943452','2026-12-06 20:21:43.403550','passed',NULL,1,0,2.23812278996774693951e-01,5,3344,15040,3577,1137,4,0,1,1,0,0.034668,1,0.034668,1,NULL,1,1,0,'clean','cgroup2','c6317770c96628d6a4c3b81839a3478907340f3161ed965e98d4c2d47e427b12','573d9d04ba288b47ba2c32675a0242a6fec05cdd11e301afefc0d6ff879ebd51','offline:synthetic','["coding"]','{"disclosure_measurements": [{"active": true, "disclosed_count": 6, "disclosed_tokens": 2010, "estimated_tokens": 9120, "hidden_count": 31, "profile": "coding"}], "full_catalog_digests": ["b9e44ce72a9137b3844307963920162dc08b9bcdb921db0f4447115c9c8985c0"], "resolved_bridge_invocations": {"c1cf846bd540f7185ded33fe33ecf732332155a0de256b6f84cfcc53d6e0b916": {"calls": 1, "errors": 0}, "c970ad4b75530da49d70f92c6510bfd47a2d8b578954b13c649157b4c1b22968": {"calls": 1, "errors": 0}}}',NULL,'f909e5d219f138f8418d14397a61e693f80e9f8febe157a120c9285ee5ebe122','58416f873fb245c2e8c80ddfbb9b09f02162533086b75f7f703c1463d314e06d');
INSERT INTO "attempts" VALUES(2,1,2,2,'finished','2026-12-06 20:21:43.441213','2026-12-06 20:21:43.832045','passed',NULL,1,0,2.0610701599798630923e-01,6,4151,56100,10976,1493,5,0,1,0,0,0.073633,1,0.073633,1,NULL,1,1,0,'clean','cgroup2','ffbd5ddb9eff7b3d9d6b4c9628eeb5a671ee794d5f3d0ac9422e296019c75ed7','573d9d04ba288b47ba2c32675a0242a6fec05cdd11e301afefc0d6ff879ebd51','offline:synthetic','["legacy"]','{"disclosure_measurements": [{"active": true, "disclosed_count": 37, "disclosed_tokens": 9120, "estimated_tokens": 9120, "hidden_count": 0, "profile": "legacy"}], "full_catalog_digests": ["b9e44ce72a9137b3844307963920162dc08b9bcdb921db0f4447115c9c8985c0"]}',NULL,'58416f873fb245c2e8c80ddfbb9b09f02162533086b75f7f703c1463d314e06d','5bd2f3ea39cf6a29700d2600a543327a5c604e09031a51a4632bb1f31ff6c187');
INSERT INTO "attempts" VALUES(3,1,3,3,'finished','2026-12-06 20:21:43.860088','2026-12-06 20:21:44.533478','passed',NULL,1,0,2.83987985003477660939e-01,7,4984,26760,4383,1422,6,0,1,2,0,0.047067,1,0.047067,1,NULL,1,1,0,'clean','cgroup2','c6317770c96628d6a4c3b81839a3478907340f3161ed965e98d4c2d47e427b12','371cac7189a3e2f6b52ffab885fc4eb1daefcee3eae82228b4a98f9e21bdc134','offline:synthetic','["coding"]','{"disclosure_measurements": [{"active": true, "disclosed_count": 6, "disclosed_tokens": 2010, "estimated_tokens": 9120, "hidden_count": 31, "profile": "coding"}], "full_catalog_digests": ["b9e44ce72a9137b3844307963920162dc08b9bcdb921db0f4447115c9c8985c0"]}',NULL,'5bd2f3ea39cf6a29700d2600a543327a5c604e09031a51a4632bb1f31ff6c187','84066686c85b898a0ae583c83260c04b5531bd81cbe8d16cdd5bc20189a51b51');
INSERT INTO "attempts" VALUES(4,1,4,4,'finished','2026-12-06 20:21:44.589993','2026-12-06 20:21:45.325604','passed',NULL,1,0,2.82342513000912731513e-01,7,4778,69420,11804,1724,6,0,1,0,0,0.083428,1,0.083428,1,NULL,1,1,0,'clean','cgroup2','ffbd5ddb9eff7b3d9d6b4c9628eeb5a671ee794d5f3d0ac9422e296019c75ed7','371cac7189a3e2f6b52ffab885fc4eb1daefcee3eae82228b4a98f9e21bdc134','offline:synthetic','["legacy"]','{"disclosure_measurements": [{"active": true, "disclosed_count": 37, "disclosed_tokens": 9120, "estimated_tokens": 9120, "hidden_count": 0, "profile": "legacy"}], "full_catalog_digests": ["b9e44ce72a9137b3844307963920162dc08b9bcdb921db0f4447115c9c8985c0"], "resolved_bridge_invocations": {"bb1700f062747196efce0de09f829938bce087ac6543c1cb18b9e3a6d967aa45": {"calls": 1, "errors": 0}, "ca0084138e01b3a939f7099dfb87ec1d59d7c62cfa91089c303502f6d896b770": {"calls": 1, "errors": 0}, "faac46210408208362900f0ce0f38a9cde323c3b15562285872ddd2447e7e7db": {"calls": 1, "errors": 0}}}',NULL,'84066686c85b898a0ae583c83260c04b5531bd81cbe8d16cdd5bc20189a51b51','2ce53f4aacedb56264a0208dca653e2030feea5a5f60e224b803bccb670e7de5');
INSERT INTO "attempts" VALUES(5,1,5,5,'finished','2026-12-06 20:21:45.357143','2026-12-06 20:21:45.903571','passed',NULL,1,0,3.05698902000585803762e-01,6,4324,56100,11279,1207,5,0,1,0,0,0.072152,1,0.072152,1,NULL,1,1,0,'clean','cgroup2','ffbd5ddb9eff7b3d9d6b4c9628eeb5a671ee794d5f3d0ac9422e296019c75ed7','573d9d04ba288b47ba2c32675a0242a6fec05cdd11e301afefc0d6ff879ebd51','offline:synthetic','["legacy"]','{"disclosure_measurements": [{"active": true, "disclosed_count": 37, "disclosed_tokens": 9120, "estimated_tokens": 9120, "hidden_count": 0, "profile": "legacy"}], "full_catalog_digests": ["b9e44ce72a9137b3844307963920162dc08b9bcdb921db0f4447115c9c8985c0"], "resolved_bridge_invocations": {"bb1700f062747196efce0de09f829938bce087ac6543c1cb18b9e3a6d967aa45": {"calls": 1, "errors": 0}}}',NULL,'2ce53f4aacedb56264a0208dca653e2030feea5a5f60e224b803bccb670e7de5','43a2179ee9e18c8f57f1f3a82643f165ac709e9e429b8ab9d3ca8cd023bbbe14');
CREATE TABLE "campaigns" (
	id INTEGER NOT NULL, 
	kind VARCHAR(64) NOT NULL, 
	state VARCHAR(64) NOT NULL, 
	live BOOLEAN NOT NULL, 
	stop_reason VARCHAR(64), 
	agent VARCHAR(128) NOT NULL, 
	seed INTEGER NOT NULL, 
	experiment_json TEXT NOT NULL, 
	experiment_digest VARCHAR(64) NOT NULL, 
	plan_digest VARCHAR(64), 
	approved_plan_digest VARCHAR(64), 
	scheduled_count INTEGER NOT NULL, 
	completion_json TEXT, 
	created_at DATETIME NOT NULL, 
	started_at DATETIME, 
	finished_at DATETIME, 
	deadline_at DATETIME, 
	runner_pid INTEGER, 
	runner_start_ticks INTEGER, 
	runner_boot_id VARCHAR(64), 
	continues_campaign_id INTEGER, 
	spend_limits_json TEXT, 
	CONSTRAINT pk_campaigns PRIMARY KEY (id), 
	CONSTRAINT ck_campaigns_kind CHECK (kind IN ('paired', 'campaign', 'nonpaired')), 
	CONSTRAINT ck_campaigns_state CHECK (state IN ('planned', 'running', 'stopped', 'completed', 'interrupted')), 
	CONSTRAINT fk_campaigns_continues_campaign_id_campaigns FOREIGN KEY(continues_campaign_id) REFERENCES campaigns (id)
);
INSERT INTO "campaigns" VALUES(1,'campaign','interrupted',1,'interrupted','offline',107,'{"agent": "offline", "config_digest": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "control_plane_port": null, "fixture_digests": {"config-layering": "371cac7189a3e2f6b52ffab885fc4eb1daefcee3eae82228b4a98f9e21bdc134", "semver-precedence": "573d9d04ba288b47ba2c32675a0242a6fec05cdd11e301afefc0d6ff879ebd51"}, "kind": "campaign", "model": "offline:synthetic", "pricing_catalog_digest": "7297089d44ad2e1eb5407db3434d1af17d9263f80c661ecffbe426a929bc0f62", "providers": [{"agent": "offline", "agent_profile_digest": "5b039eb98ab1c32231988e7f59a7532bfc24049a30e3619ca0af077651656e2b", "basis": "synthetic", "credential_env": null, "model": "offline:synthetic", "name": "offline"}], "repetitions": 2, "seed": 107, "tasks": ["semver-precedence", "config-layering"], "timeout": 660, "variants": [{"config_digest": "ffbd5ddb9eff7b3d9d6b4c9628eeb5a671ee794d5f3d0ac9422e296019c75ed7", "name": "baseline", "overlay_digest": "0c506c15565b301568687baf874626f51956c0c0571cae2d3a4c8a2970cce326"}, {"config_digest": "c6317770c96628d6a4c3b81839a3478907340f3161ed965e98d4c2d47e427b12", "name": "coding", "overlay_digest": "cc89f5fa38854a8c0183ac77243edeeb3e5b239b1bc8103cb546365bb7418534"}]}','f909e5d219f138f8418d14397a61e693f80e9f8febe157a120c9285ee5ebe122',NULL,NULL,8,NULL,'2026-12-06 20:21:42.911875','2026-12-06 20:21:42.936030','2026-12-06 20:21:45.918535',NULL,NULL,NULL,NULL,NULL,NULL);
CREATE TABLE "ledger" (
	id INTEGER NOT NULL, 
	attempt_id INTEGER NOT NULL, 
	role VARCHAR(64) NOT NULL, 
	pid INTEGER NOT NULL, 
	start_ticks INTEGER NOT NULL, 
	boot_id VARCHAR(64) NOT NULL, 
	pid_ns VARCHAR(64), 
	pgid INTEGER, 
	discovered BOOLEAN NOT NULL, 
	created_at DATETIME NOT NULL, 
	state VARCHAR(64) NOT NULL, 
	verification VARCHAR(64), 
	verified_at DATETIME, 
	CONSTRAINT pk_ledger PRIMARY KEY (id), 
	CONSTRAINT fk_ledger_attempt_id_attempts FOREIGN KEY(attempt_id) REFERENCES attempts (id), 
	CONSTRAINT ck_ledger_role CHECK (role IN ('runtime', 'client', 'verifier', 'fixture', 'descendant', 'profiler', 'provider'))
);
INSERT INTO "ledger" VALUES(1,1,'client',2978,2041046,'368bd15e-d7af-42dd-aa58-750c3938a061','pid:[4026531836]',2978,0,'2026-12-06 20:21:42.991784','gone','exited','2026-12-06 20:21:43.371023');
INSERT INTO "ledger" VALUES(2,1,'verifier',2980,2041072,'368bd15e-d7af-42dd-aa58-750c3938a061','pid:[4026531836]',2980,0,'2026-12-06 20:21:43.255629','gone','exited','2026-12-06 20:21:43.373681');
INSERT INTO "ledger" VALUES(3,2,'client',2981,2041095,'368bd15e-d7af-42dd-aa58-750c3938a061','pid:[4026531836]',2981,0,'2026-12-06 20:21:43.483803','gone','exited','2026-12-06 20:21:43.813906');
INSERT INTO "ledger" VALUES(4,2,'verifier',2984,2041118,'368bd15e-d7af-42dd-aa58-750c3938a061','pid:[4026531836]',2984,0,'2026-12-06 20:21:43.707770','gone','exited','2026-12-06 20:21:43.819459');
INSERT INTO "ledger" VALUES(5,3,'client',2986,2041137,'368bd15e-d7af-42dd-aa58-750c3938a061','pid:[4026531836]',2986,0,'2026-12-06 20:21:43.919874','gone','exited','2026-12-06 20:21:44.441868');
INSERT INTO "ledger" VALUES(6,3,'verifier',2991,2041169,'368bd15e-d7af-42dd-aa58-750c3938a061','pid:[4026531836]',2991,0,'2026-12-06 20:21:44.243610','gone','exited','2026-12-06 20:21:44.467289');
INSERT INTO "ledger" VALUES(7,4,'client',2993,2041213,'368bd15e-d7af-42dd-aa58-750c3938a061','pid:[4026531836]',2993,0,'2026-12-06 20:21:44.695964','gone','exited','2026-12-06 20:21:45.256720');
INSERT INTO "ledger" VALUES(8,4,'verifier',2994,2041246,'368bd15e-d7af-42dd-aa58-750c3938a061','pid:[4026531836]',2994,0,'2026-12-06 20:21:44.995603','gone','exited','2026-12-06 20:21:45.271768');
INSERT INTO "ledger" VALUES(9,5,'client',2995,2041287,'368bd15e-d7af-42dd-aa58-750c3938a061','pid:[4026531836]',2995,0,'2026-12-06 20:21:45.411818','gone','exited','2026-12-06 20:21:45.872992');
INSERT INTO "ledger" VALUES(10,5,'verifier',2998,2041319,'368bd15e-d7af-42dd-aa58-750c3938a061','pid:[4026531836]',2998,0,'2026-12-06 20:21:45.727555','gone','exited','2026-12-06 20:21:45.883583');
CREATE TABLE provider_leases (
	id INTEGER NOT NULL, 
	campaign_id INTEGER NOT NULL, 
	provider VARCHAR(64) NOT NULL, 
	worker_host VARCHAR(128), 
	worker_pid INTEGER, 
	worker_start_ticks INTEGER, 
	worker_boot_id VARCHAR(64), 
	heartbeat_epoch FLOAT, 
	halted_reason VARCHAR(64), 
	halted_attempt_id INTEGER, halted_note TEXT, 
	CONSTRAINT pk_provider_leases PRIMARY KEY (id), 
	CONSTRAINT fk_provider_leases_campaign_id_campaigns FOREIGN KEY(campaign_id) REFERENCES campaigns (id), 
	CONSTRAINT uq_provider_leases_campaign_id_provider UNIQUE (campaign_id, provider)
);
INSERT INTO "provider_leases" VALUES(1,1,'offline',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
CREATE TABLE spend_reservations (
	id INTEGER NOT NULL, 
	campaign_id INTEGER NOT NULL, 
	trial_pk INTEGER NOT NULL, 
	provider VARCHAR(64) NOT NULL, 
	nano_usd INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_spend_reservations PRIMARY KEY (id), 
	CONSTRAINT fk_spend_reservations_campaign_id_campaigns FOREIGN KEY(campaign_id) REFERENCES campaigns (id), 
	CONSTRAINT fk_spend_reservations_trial_pk_trials FOREIGN KEY(trial_pk) REFERENCES trials (id), 
	CONSTRAINT uq_spend_reservations_trial_pk UNIQUE (trial_pk)
);
CREATE TABLE "trials" (
	id INTEGER NOT NULL, 
	campaign_id INTEGER NOT NULL, 
	pair_id VARCHAR(128) NOT NULL, 
	trial_id VARCHAR(128) NOT NULL, 
	provider VARCHAR(64) NOT NULL, 
	model VARCHAR(128) NOT NULL, 
	task VARCHAR(128) NOT NULL, 
	variant VARCHAR(64) NOT NULL, 
	repetition INTEGER NOT NULL, 
	pair_order INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	status VARCHAR(64) NOT NULL, 
	not_attempted_reason VARCHAR(64), 
	updated_at DATETIME NOT NULL, 
	carried_from_trial_pk INTEGER, 
	CONSTRAINT pk_trials PRIMARY KEY (id), 
	CONSTRAINT uq_trials_campaign_id_trial_id UNIQUE (campaign_id, trial_id), 
	CONSTRAINT ck_trials_repetition_positive CHECK (repetition >= 1), 
	CONSTRAINT fk_trials_campaign_id_campaigns FOREIGN KEY(campaign_id) REFERENCES campaigns (id), 
	CONSTRAINT uq_trials_campaign_id_position UNIQUE (campaign_id, position), 
	CONSTRAINT ck_trials_status CHECK (status IN ('scheduled', 'admitted', 'finished', 'not_attempted')), 
	CONSTRAINT fk_trials_carried_from_trial_pk_trials FOREIGN KEY(carried_from_trial_pk) REFERENCES trials (id)
);
INSERT INTO "trials" VALUES(1,1,'offline/semver-precedence/r1','offline/semver-precedence/r1/coding','offline','offline:synthetic','semver-precedence','coding',1,0,0,'finished',NULL,'2026-12-06 20:21:43.406235',NULL);
INSERT INTO "trials" VALUES(2,1,'offline/semver-precedence/r1','offline/semver-precedence/r1/baseline','offline','offline:synthetic','semver-precedence','baseline',1,1,1,'finished',NULL,'2026-12-06 20:21:43.833018',NULL);
INSERT INTO "trials" VALUES(3,1,'offline/config-layering/r1','offline/config-layering/r1/coding','offline','offline:synthetic','config-layering','coding',1,0,2,'finished',NULL,'2026-12-06 20:21:44.534610',NULL);
INSERT INTO "trials" VALUES(4,1,'offline/config-layering/r1','offline/config-layering/r1/baseline','offline','offline:synthetic','config-layering','baseline',1,1,3,'finished',NULL,'2026-12-06 20:21:45.331422',NULL);
INSERT INTO "trials" VALUES(5,1,'offline/semver-precedence/r2','offline/semver-precedence/r2/baseline','offline','offline:synthetic','semver-precedence','baseline',2,0,4,'finished',NULL,'2026-12-06 20:21:45.904704',NULL);
INSERT INTO "trials" VALUES(6,1,'offline/semver-precedence/r2','offline/semver-precedence/r2/coding','offline','offline:synthetic','semver-precedence','coding',2,1,5,'scheduled',NULL,'2026-12-06 20:21:42.911875',NULL);
INSERT INTO "trials" VALUES(7,1,'offline/config-layering/r2','offline/config-layering/r2/baseline','offline','offline:synthetic','config-layering','baseline',2,0,6,'scheduled',NULL,'2026-12-06 20:21:42.911875',NULL);
INSERT INTO "trials" VALUES(8,1,'offline/config-layering/r2','offline/config-layering/r2/coding','offline','offline:synthetic','config-layering','coding',2,1,7,'scheduled',NULL,'2026-12-06 20:21:42.911875',NULL);
CREATE INDEX ix_ledger_attempt_id ON ledger (attempt_id);
CREATE INDEX ix_trials_campaign_id_status ON trials (campaign_id, status);
CREATE INDEX ix_trials_campaign_id ON trials (campaign_id);
CREATE INDEX ix_spend_reservations_campaign_id ON spend_reservations (campaign_id);
CREATE INDEX ix_attempts_campaign_id ON attempts (campaign_id);
CREATE INDEX ix_attempts_trial_pk ON attempts (trial_pk);
COMMIT;
