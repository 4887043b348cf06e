BEGIN TRANSACTION;
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
INSERT INTO "alembic_version" VALUES('0006');
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
	CONSTRAINT ck_attempts_status CHECK (status IN ('running', 'finished', 'interrupted')), 
	CONSTRAINT uq_attempts_campaign_id_seq UNIQUE (campaign_id, seq), 
	CONSTRAINT fk_attempts_campaign_id_campaigns FOREIGN KEY(campaign_id) REFERENCES campaigns (id), 
	CONSTRAINT fk_attempts_trial_pk_trials FOREIGN KEY(trial_pk) REFERENCES trials (id)
);
INSERT INTO "attempts" VALUES(1,1,1,1,'finished','2026-03-01 12:00:51.873459','2026-03-01 12:01:09.123460','failed','verifier_failed',0,1,1.0e-05,7,NULL,2205,NULL,51,10,0,1,2,0,0.1,NULL,NULL,0,NULL,1,1,0,'forced','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','claude-sonnet-4-5@20250929','["legacy"]',NULL,'/tmp/campaign-paired-runtime-x','f7ce3835f23b17e3d26593ace32b0a37dd156a2af6269e63db11074947d142d4','ff7b6ffa58114bb50ebfc4f9ef8850b32947e15ac5b39e941964e0834d7890f4');
INSERT INTO "attempts" VALUES(2,1,2,2,'finished','2026-03-01 12:02:00.873463','2026-03-01 12:02:18.123464','failed','verifier_failed',0,1,1.2e-05,4,311450804967,2216,NULL,684,22,0,1,0,1,0.0001,NULL,NULL,NULL,NULL,1,1,0,'recovered','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101',NULL,'["legacy"]','{"catalog_digests": ["abababababababababababababababababababababababababababababababab"], "request_count": 7, "visible_schema_tokens": 1234, "disclosure_measurements": [{"profile": "coding", "active": true, "estimated_tokens": 77}]}','/tmp/campaign-paired-runtime-x','ff7b6ffa58114bb50ebfc4f9ef8850b32947e15ac5b39e941964e0834d7890f4','18e66fedad327890109d2110933ab003e92460d195dc246765d5562910d1215b');
INSERT INTO "attempts" VALUES(3,1,3,3,'finished','2026-03-01 12:03:09.873467','2026-03-01 12:03:27.123468','passed',NULL,1,0,NULL,4,951451799898,721,NULL,93,14,1,NULL,1,1,0.0001,1,NULL,1,NULL,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','sk-abcdefghijklmnopqrstuvwxyz0123','["coding"]',NULL,'/tmp/campaign-paired-runtime-x','18e66fedad327890109d2110933ab003e92460d195dc246765d5562910d1215b','00f8869559872dd14f1c898707efd2ccfcf8bead618c663948cd1af0508fef8f');
INSERT INTO "attempts" VALUES(4,1,4,4,'interrupted','2026-03-01 12:04:18.873471','2026-03-01 12:04:36.123472','interrupted','interrupted',NULL,0,1.6179198184706973507e+02,3,NULL,4386,NULL,138,25,0,NULL,0,0,0.0001,0,NULL,0,NULL,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','sk-abcdefghijklmnopqrstuvwxyz0123','["legacy"]','{"catalog_digests": ["abababababababababababababababababababababababababababababababab"], "request_count": 9, "visible_schema_tokens": 1234, "disclosure_measurements": [{"profile": "coding", "active": true, "estimated_tokens": 77}]}','/tmp/campaign-paired-runtime-x','00f8869559872dd14f1c898707efd2ccfcf8bead618c663948cd1af0508fef8f','e8ab8a20b2bbab42223dc6462c171c483479ac2bcc47d162b3a5a7e09921f441');
INSERT INTO "attempts" VALUES(5,1,4,5,'finished','2026-03-01 12:05:27.873475','2026-03-01 12:05:45.123476','passed',NULL,1,0,NULL,5,NULL,4096,NULL,359,20,NULL,1,0,0,12.5,NULL,2.5e-05,NULL,NULL,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]','not json','/tmp/campaign-paired-runtime-x','e8ab8a20b2bbab42223dc6462c171c483479ac2bcc47d162b3a5a7e09921f441','0337923ab432f02725ba9691725faada44a87f3aafe7178f18b49b4a09137e08');
INSERT INTO "attempts" VALUES(6,1,5,6,'finished','2026-03-01 12:06:36.873479','2026-03-01 12:06:54.123480','failed','verifier_failed',0,1,1.2e-05,1,48020541044,797,NULL,595,15,0,1,1,0,0.2,NULL,2.5e-05,1,1,1,1,0,'clean','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101',NULL,'["legacy"]','{"catalog_digests": ["abababababababababababababababababababababababababababababababab"], "request_count": 1, "visible_schema_tokens": 1234, "disclosure_measurements": [{"profile": "coding", "active": true, "estimated_tokens": 77}]}','/tmp/campaign-paired-runtime-x','0337923ab432f02725ba9691725faada44a87f3aafe7178f18b49b4a09137e08','295b6e41902d9b948c35d95d283d807e4cd89bd2812d95c3d951aab3362d6add');
INSERT INTO "attempts" VALUES(7,1,7,7,'finished','2026-03-01 12:07:45.873483','2026-03-01 12:08:03.123484','passed',NULL,1,0,NULL,6,NULL,1890,NULL,116,8,NULL,NULL,0,2,12.5,0,NULL,1,NULL,1,1,0,'clean','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]','not json','/tmp/campaign-paired-runtime-x','295b6e41902d9b948c35d95d283d807e4cd89bd2812d95c3d951aab3362d6add','3c2315491b5bf9a2ced351e5c386dc2f8a900e0d26827166a7616c62819c4538');
INSERT INTO "attempts" VALUES(8,1,8,8,'finished','2026-03-01 12:08:54.873487','2026-03-01 12:09:12.123488','failed','verifier_failed',0,1,1.2e-05,3,306788652852,2804,NULL,266,27,NULL,1,2,2,5.0e-05,1,NULL,0,NULL,1,1,0,'recovered','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','claude-sonnet-4-5@20250929','["legacy"]','not json','/tmp/campaign-paired-runtime-x','3c2315491b5bf9a2ced351e5c386dc2f8a900e0d26827166a7616c62819c4538','bb4aae95f7561f8b1a70c7de3d1e7085d0f130ec49e19dcc3744f8a764179083');
INSERT INTO "attempts" VALUES(9,1,9,9,'finished','2026-03-01 12:10:03.873491','2026-03-01 12:10:21.123492','passed',NULL,1,0,1.0e-05,7,NULL,4415,NULL,196,15,3,1,0,1,0.0001,NULL,2.5e-05,1,1,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','sk-abcdefghijklmnopqrstuvwxyz0123','["legacy"]',NULL,'/tmp/campaign-paired-runtime-x','bb4aae95f7561f8b1a70c7de3d1e7085d0f130ec49e19dcc3744f8a764179083','eaa5c413cf609118c26e48cb7f447d6a022eabfa3cc2b99da58f39c3847cff76');
INSERT INTO "attempts" VALUES(10,1,10,10,'finished','2026-03-01 12:11:12.873495','2026-03-01 12:11:30.123496','passed',NULL,1,0,1.77974357779025808669e+02,9,NULL,4151,NULL,703,1,NULL,NULL,2,0,0.1,1,0.0042,0,NULL,1,1,0,'forced','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','modèle-ü','["legacy"]','{"catalog_digests": ["abababababababababababababababababababababababababababababababab"], "request_count": 1, "visible_schema_tokens": 1234, "disclosure_measurements": [{"profile": "coding", "active": true, "estimated_tokens": 77}]}','/tmp/campaign-paired-runtime-x','eaa5c413cf609118c26e48cb7f447d6a022eabfa3cc2b99da58f39c3847cff76','f7a3a59170b2b914c580cb38baca0d4b1551839d2c31e5b3eafa9072cb4e017f');
INSERT INTO "attempts" VALUES(11,1,11,11,'interrupted','2026-03-01 12:12:21.873499','2026-03-01 12:12:39.123500','interrupted','interrupted',NULL,1,NULL,3,NULL,2577,NULL,306,28,NULL,1,0,0,0.0001,0,0.0042,0,1,1,1,0,'forced','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','sk-abcdefghijklmnopqrstuvwxyz0123','["legacy"]','not json','/tmp/campaign-paired-runtime-x','f7a3a59170b2b914c580cb38baca0d4b1551839d2c31e5b3eafa9072cb4e017f','c097eace0e064d8fb371b7f51ffe335431532f6f2cf22f2f2684f5e464e5916a');
INSERT INTO "attempts" VALUES(12,1,11,12,'finished','2026-03-01 12:13:30.873503','2026-03-01 12:13:48.123504','passed',NULL,1,0,1.0e-05,3,1018081150125,4211,NULL,556,6,NULL,NULL,0,1,NULL,NULL,NULL,NULL,1,1,1,0,'forced','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','claude-sonnet-4-5@20250929','["legacy"]','{"x": "\u00e9"}','/tmp/campaign-paired-runtime-x','c097eace0e064d8fb371b7f51ffe335431532f6f2cf22f2f2684f5e464e5916a','1dca4a4187821d301871ef20acca7243782cf069df9a0c28946f7f1f5def961c');
INSERT INTO "attempts" VALUES(13,1,12,13,'finished','2026-03-01 12:14:39.873507','2026-03-01 12:14:57.123508','passed',NULL,1,0,NULL,5,NULL,4775,NULL,470,13,NULL,1,2,1,0.1,NULL,0.0042,0,1,1,1,0,'forced','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["coding"]','{"x": "\u00e9"}','/tmp/campaign-paired-runtime-x','1dca4a4187821d301871ef20acca7243782cf069df9a0c28946f7f1f5def961c','2f211b3ce5a7ff360402830e009db1845993bd23711ce27222c9ef546d11e17b');
INSERT INTO "attempts" VALUES(14,1,14,14,'finished','2026-03-01 12:16:06.123512','2026-03-01 12:16:23.373513','failed','verifier_failed',0,1,1.2e-05,4,NULL,1323,NULL,600,25,1,NULL,2,2,1.234e-07,1,0.0042,NULL,NULL,1,1,0,'recovered','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','sk-abcdefghijklmnopqrstuvwxyz0123','["legacy"]','{"x": "\u00e9"}','/tmp/campaign-paired-runtime-x','2f211b3ce5a7ff360402830e009db1845993bd23711ce27222c9ef546d11e17b','321d3210252828593fc5d3013df45b01ce8bf9d4d040ba6dbe0cdbc7f1b89d27');
INSERT INTO "attempts" VALUES(15,1,15,15,'finished','2026-03-01 12:17:15.123516','2026-03-01 12:17:32.373517','passed',NULL,1,0,12.75,8,NULL,2904,NULL,472,25,1,NULL,2,2,0.2,1,0.0042,NULL,NULL,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]','not json','/tmp/campaign-paired-runtime-x','321d3210252828593fc5d3013df45b01ce8bf9d4d040ba6dbe0cdbc7f1b89d27','3b43dc3b4d3a0a88ac5dc1820f890b757c81b7d3b038fa2557b5f75718398399');
INSERT INTO "attempts" VALUES(16,1,16,16,'finished','2026-03-01 12:18:24.123520','2026-03-01 12:18:41.373521','failed','verifier_failed',0,1,1.0e-05,3,NULL,3051,NULL,518,20,1,NULL,0,0,1.234e-07,0,0.0042,1,NULL,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]',NULL,'/tmp/campaign-paired-runtime-x','3b43dc3b4d3a0a88ac5dc1820f890b757c81b7d3b038fa2557b5f75718398399','cb3eea39ed3f53e46c27c94131738b612d139fe56df13b621b8fb9dd0199e3b7');
INSERT INTO "attempts" VALUES(17,1,18,17,'interrupted','2026-03-01 12:19:33.123524','2026-03-01 12:19:50.373525','interrupted','interrupted',NULL,0,1.0e-05,4,977904227401,2667,NULL,715,25,1,NULL,0,2,0.1,NULL,NULL,0,NULL,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101',NULL,'["legacy"]','{"x": "\u00e9"}','/tmp/campaign-paired-runtime-x','cb3eea39ed3f53e46c27c94131738b612d139fe56df13b621b8fb9dd0199e3b7','4b62ef7da7efc70593f811f02fd1a5d47adbcb6b632f58cca4939c4a47743e51');
INSERT INTO "attempts" VALUES(18,1,18,18,'finished','2026-03-01 12:20:42.123528','2026-03-01 12:20:59.373529','failed','verifier_failed',0,1,1.2e-05,4,NULL,2686,NULL,409,16,NULL,NULL,2,1,1.234e-07,NULL,NULL,1,NULL,1,1,0,'clean','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','sk-abcdefghijklmnopqrstuvwxyz0123','["legacy"]','not json','/tmp/campaign-paired-runtime-x','4b62ef7da7efc70593f811f02fd1a5d47adbcb6b632f58cca4939c4a47743e51','5708a644677160d6c19dc3d74b02b4eef9df07a6389e2e6d347c9b69fc206313');
INSERT INTO "attempts" VALUES(19,1,19,19,'finished','2026-03-01 12:21:51.123532','2026-03-01 12:22:08.373533','failed','verifier_failed',0,1,3.50600495347565583865e+02,1,NULL,3802,NULL,837,6,1,1,0,1,12.5,1,NULL,1,1,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','modèle-ü','["legacy"]','not json','/tmp/campaign-paired-runtime-x','5708a644677160d6c19dc3d74b02b4eef9df07a6389e2e6d347c9b69fc206313','87feda0a37f7697887412683dc78f879426b22ace5654a461b09267aaf88010a');
INSERT INTO "attempts" VALUES(20,1,20,20,'finished','2026-03-01 12:23:00.123536','2026-03-01 12:23:17.373537','passed',NULL,1,0,6.59519084158833607039e+02,4,NULL,3457,NULL,400,4,NULL,1,1,2,0.0001,1,0.0042,NULL,1,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','claude-sonnet-4-5@20250929','["legacy"]',NULL,'/tmp/campaign-paired-runtime-x','87feda0a37f7697887412683dc78f879426b22ace5654a461b09267aaf88010a','a10f59086e1138a24efc9718df7a597dbb56074c5722eea0c11a4082e24a3678');
INSERT INTO "attempts" VALUES(21,1,21,21,'finished','2026-03-01 12:24:09.123540','2026-03-01 12:24:26.373541','failed','verifier_failed',0,1,1.07032478763942293651e+02,3,NULL,2121,NULL,674,29,0,1,2,1,12.5,1,0.0042,1,NULL,0,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','modèle-ü','["legacy"]','not json','/tmp/campaign-paired-runtime-x','a10f59086e1138a24efc9718df7a597dbb56074c5722eea0c11a4082e24a3678','08898a1da14e0c799f5b77797b82dbecd11892f2531ba16ba523b04be543fcfa');
INSERT INTO "attempts" VALUES(22,1,22,22,'finished','2026-03-01 12:25:18.123544','2026-03-01 12:25:35.373545','passed',NULL,1,0,5.54131216770427727181e+02,6,NULL,1090,NULL,160,10,1,NULL,0,2,3.00000000000000044408e-01,1,NULL,NULL,NULL,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','sk-abcdefghijklmnopqrstuvwxyz0123','["coding"]',NULL,'/tmp/campaign-paired-runtime-x','08898a1da14e0c799f5b77797b82dbecd11892f2531ba16ba523b04be543fcfa','f5fe1a7711990cb7b0175f7f7157e7c8922d21fa331ab91b84fbc5eb91dcf225');
INSERT INTO "attempts" VALUES(23,1,23,23,'finished','2026-03-01 12:26:27.123548','2026-03-01 12:26:44.373549','failed','verifier_failed',0,1,1.2e-05,8,NULL,1431,NULL,329,8,NULL,1,0,0,12.5,1,2.5e-05,NULL,1,1,1,0,'recovered','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','claude-sonnet-4-5@20250929','["coding"]','not json','/tmp/campaign-paired-runtime-x','f5fe1a7711990cb7b0175f7f7157e7c8922d21fa331ab91b84fbc5eb91dcf225','b01f8b1a672b4f6301e36d5064752425ce59e361c3c14dbbdbb3fc016d87c395');
INSERT INTO "attempts" VALUES(24,1,24,24,'finished','2026-03-01 12:27:36.123552','2026-03-01 12:27:53.373553','failed','verifier_failed',0,1,1.0e-05,0,670143605879,3165,NULL,107,11,3,NULL,1,0,5.0e-05,0,2.5e-05,0,NULL,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101',NULL,'["legacy"]',NULL,'/tmp/campaign-paired-runtime-x','b01f8b1a672b4f6301e36d5064752425ce59e361c3c14dbbdbb3fc016d87c395','1c52225c24a1ed05e06b2e52323f70473c03c8b763290780c9672099d6623780');
INSERT INTO "attempts" VALUES(25,1,25,25,'interrupted','2026-03-01 12:28:45.123556','2026-03-01 12:29:02.373557','interrupted','interrupted',NULL,1,1.2e-05,5,587616881589,995,NULL,280,10,1,1,0,1,5.0e-05,NULL,0.0042,0,NULL,1,1,0,'forced','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]','{"catalog_digests": ["abababababababababababababababababababababababababababababababab"], "request_count": 8, "visible_schema_tokens": 1234, "disclosure_measurements": [{"profile": "coding", "active": true, "estimated_tokens": 77}]}','/tmp/campaign-paired-runtime-x','1c52225c24a1ed05e06b2e52323f70473c03c8b763290780c9672099d6623780','c11de5166ec270d769eb339b06dee33e401d2a5e664438605b5b42951b57518d');
INSERT INTO "attempts" VALUES(26,1,25,26,'finished','2026-03-01 12:29:54.123560','2026-03-01 12:30:11.373561','failed','verifier_failed',0,1,1.2e-05,1,823845240081,3983,NULL,457,16,3,NULL,1,1,0.1,1,0.0042,0,NULL,1,1,0,'clean','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101',NULL,'["legacy"]','{"x": "\u00e9"}','/tmp/campaign-paired-runtime-x','c11de5166ec270d769eb339b06dee33e401d2a5e664438605b5b42951b57518d','bcacd1c5bf8dd3822422d404e06767fdb5eeba4f7be10b743c9cb20817067fd4');
INSERT INTO "attempts" VALUES(27,1,27,27,'finished','2026-03-01 12:31:20.373565','2026-03-01 12:31:37.623566','passed',NULL,1,0,12.75,7,NULL,3961,NULL,316,22,NULL,1,0,2,NULL,NULL,0.0042,1,NULL,1,1,0,'recovered','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','sk-abcdefghijklmnopqrstuvwxyz0123','["coding"]','{"x": "\u00e9"}','/tmp/campaign-paired-runtime-x','bcacd1c5bf8dd3822422d404e06767fdb5eeba4f7be10b743c9cb20817067fd4','f5af79734795398ed4fabaacc2010be9594074672b8e9a015f70e824f2527bc3');
INSERT INTO "attempts" VALUES(28,1,29,28,'finished','2026-03-01 12:32:29.373569','2026-03-01 12:32:46.623570','passed',NULL,1,0,12.75,3,NULL,4281,NULL,270,1,1,NULL,0,0,0.2,NULL,0.0042,1,1,1,1,0,'recovered','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101',NULL,'["legacy"]',NULL,'/tmp/campaign-paired-runtime-x','f5af79734795398ed4fabaacc2010be9594074672b8e9a015f70e824f2527bc3','fdc2f1871c26ca889dc3ee6401648963eb442a723179f59109b03a8de9937d21');
INSERT INTO "attempts" VALUES(29,1,30,29,'finished','2026-03-01 12:33:38.373573','2026-03-01 12:33:55.623574','failed','verifier_failed',0,1,1.2e-05,5,NULL,4462,NULL,513,23,0,NULL,2,0,3.00000000000000044408e-01,0,0.0042,1,NULL,1,1,0,'forced','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]','{"x": "\u00e9"}','/tmp/campaign-paired-runtime-x','fdc2f1871c26ca889dc3ee6401648963eb442a723179f59109b03a8de9937d21','d07a34ca9ca7326ce53f085bfb79411af841c39af01c90babf1b6826b337307e');
INSERT INTO "attempts" VALUES(30,1,31,30,'finished','2026-03-01 12:34:47.373577','2026-03-01 12:35:04.623578','passed',NULL,1,0,562.362667148537,3,104055104606,2357,NULL,690,2,0,NULL,1,1,0.0001,NULL,2.5e-05,0,1,1,1,0,'recovered','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','claude-sonnet-4-5@20250929','["legacy"]','not json','/tmp/campaign-paired-runtime-x','d07a34ca9ca7326ce53f085bfb79411af841c39af01c90babf1b6826b337307e','cdaf141b4be1db407714c4db5627ddc3b12069144fc6b9209658768d1bf90981');
INSERT INTO "attempts" VALUES(31,1,32,31,'interrupted','2026-03-01 12:35:56.373581','2026-03-01 12:36:13.623582','interrupted','interrupted',NULL,0,NULL,1,509324368968,753,NULL,773,0,3,1,1,1,3.0e-06,1,NULL,0,NULL,1,1,0,'forced','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','modèle-ü','["legacy"]','not json','/tmp/campaign-paired-runtime-x','cdaf141b4be1db407714c4db5627ddc3b12069144fc6b9209658768d1bf90981','1080c23329c38150323232de16dfed0aa3f0d5cfb860739b02229b92fe6e3cab');
INSERT INTO "attempts" VALUES(32,1,32,32,'finished','2026-03-01 12:37:05.373585','2026-03-01 12:37:22.623586','failed','verifier_failed',0,1,NULL,1,NULL,2711,NULL,779,20,1,NULL,2,2,NULL,1,2.5e-05,1,1,1,1,0,'forced','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','sk-abcdefghijklmnopqrstuvwxyz0123','["legacy"]',NULL,'/tmp/campaign-paired-runtime-x','1080c23329c38150323232de16dfed0aa3f0d5cfb860739b02229b92fe6e3cab','331fd6b6cfe3c670f13e8aa63ba08d740abf42ae6efe56f43e48ef7c0d00434c');
INSERT INTO "attempts" VALUES(33,1,33,33,'finished','2026-03-01 12:38:14.373589','2026-03-01 12:38:31.623590','passed',NULL,1,0,8.05746949636957083412e+02,8,490151559576,3295,NULL,307,17,3,NULL,2,1,NULL,NULL,2.5e-05,1,NULL,1,1,0,'clean','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]','{"catalog_digests": ["abababababababababababababababababababababababababababababababab"], "request_count": 7, "visible_schema_tokens": 1234, "disclosure_measurements": [{"profile": "coding", "active": true, "estimated_tokens": 77}]}','/tmp/campaign-paired-runtime-x','331fd6b6cfe3c670f13e8aa63ba08d740abf42ae6efe56f43e48ef7c0d00434c','5ce37b1eae6c3bd5b28bf58805c9cf4a825a0fcab4a1373e3d13fca8c2d9f8d6');
INSERT INTO "attempts" VALUES(34,1,34,34,'finished','2026-03-01 12:39:23.373593','2026-03-01 12:39:40.623594','failed','verifier_failed',0,1,1.0e-05,0,NULL,1959,NULL,92,20,0,1,2,1,12.5,0,NULL,NULL,1,1,1,0,'forced','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]','{"catalog_digests": ["abababababababababababababababababababababababababababababababab"], "request_count": 5, "visible_schema_tokens": 1234, "disclosure_measurements": [{"profile": "coding", "active": true, "estimated_tokens": 77}]}','/tmp/campaign-paired-runtime-x','5ce37b1eae6c3bd5b28bf58805c9cf4a825a0fcab4a1373e3d13fca8c2d9f8d6','fe6b4506db12fd686fa7a8eebc382b987306a75a69e9438839962f22a81d180d');
INSERT INTO "attempts" VALUES(35,1,35,35,'finished','2026-03-01 12:40:32.373597','2026-03-01 12:40:49.623598','failed','verifier_failed',0,1,1.72706996330707227113e+02,0,NULL,3092,NULL,517,20,NULL,NULL,1,1,12.5,1,0.0042,0,NULL,1,1,0,'forced','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','modèle-ü','["legacy"]','{"x": "\u00e9"}','/tmp/campaign-paired-runtime-x','fe6b4506db12fd686fa7a8eebc382b987306a75a69e9438839962f22a81d180d','d596d6139e111a7912471c2b82c1037a342fba1534cec405eac7d6dd23d37e09');
INSERT INTO "attempts" VALUES(36,1,36,36,'finished','2026-03-01 12:41:41.373601','2026-03-01 12:41:58.623602','failed','verifier_failed',0,1,12.75,8,270623032508,3177,NULL,287,15,NULL,NULL,2,1,0.1,NULL,NULL,1,1,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]',NULL,'/tmp/campaign-paired-runtime-x','d596d6139e111a7912471c2b82c1037a342fba1534cec405eac7d6dd23d37e09','0252900d6367ecec6b09dea5114d118db369f0cb0d594947398146366d7dff81');
INSERT INTO "attempts" VALUES(37,1,37,37,'finished','2026-03-01 12:42:50.373605','2026-03-01 12:43:07.623606','passed',NULL,1,0,NULL,3,NULL,4868,NULL,765,12,NULL,NULL,1,0,0.0001,0,2.5e-05,1,1,1,1,0,'recovered','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','claude-sonnet-4-5@20250929','["coding"]',NULL,'/tmp/campaign-paired-runtime-x','0252900d6367ecec6b09dea5114d118db369f0cb0d594947398146366d7dff81','4a325d6218b7672e16b8e51da3190c624df17428d02dc0db2f8a3a5f35e97d46');
INSERT INTO "attempts" VALUES(38,1,38,38,'finished','2026-03-01 12:43:59.373609','2026-03-01 12:44:16.623610','failed','verifier_failed',0,1,12.75,5,NULL,4370,NULL,837,2,NULL,NULL,2,0,0.1,0,0.0042,1,1,1,1,0,'clean','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]',NULL,'/tmp/campaign-paired-runtime-x','4a325d6218b7672e16b8e51da3190c624df17428d02dc0db2f8a3a5f35e97d46','8f66e400bb7f5db74cd8c45bbe5998274814f2dea4a0dc10544a3469a46a204c');
INSERT INTO "attempts" VALUES(39,1,39,39,'interrupted','2026-03-01 12:45:08.373613','2026-03-01 12:45:25.623614','interrupted','interrupted',NULL,1,1.2e-05,9,NULL,175,NULL,440,22,3,1,1,0,3.00000000000000044408e-01,0,2.5e-05,0,1,1,1,0,'clean','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]','{"catalog_digests": ["abababababababababababababababababababababababababababababababab"], "request_count": 6, "visible_schema_tokens": 1234, "disclosure_measurements": [{"profile": "coding", "active": true, "estimated_tokens": 77}]}','/tmp/campaign-paired-runtime-x','8f66e400bb7f5db74cd8c45bbe5998274814f2dea4a0dc10544a3469a46a204c','f23205738b216d31a8c6680943014d000d73709d1e74d9ec84f16c09887cccfa');
INSERT INTO "attempts" VALUES(40,1,40,40,'finished','2026-03-01 12:46:17.373617','2026-03-01 12:46:34.623618','failed','verifier_failed',0,1,1.0e-05,7,577714423976,1769,NULL,226,5,3,NULL,0,1,12.5,0,NULL,1,1,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','sk-abcdefghijklmnopqrstuvwxyz0123','["legacy"]',NULL,'/tmp/campaign-paired-runtime-x','f23205738b216d31a8c6680943014d000d73709d1e74d9ec84f16c09887cccfa','0e15c09113ea4c95cfa70248212b1a711168f0a9965a188974fba35da4a6f864');
INSERT INTO "attempts" VALUES(41,1,41,41,'finished','2026-03-01 12:47:26.373621','2026-03-01 12:47:43.623622','passed',NULL,1,0,12.75,4,988945807135,3626,NULL,220,23,NULL,NULL,2,0,NULL,0,0.0042,0,1,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]',NULL,'/tmp/campaign-paired-runtime-x','0e15c09113ea4c95cfa70248212b1a711168f0a9965a188974fba35da4a6f864','88e7e309259609d35b19a57eb09775fa23b54da36bce7b3cae2067f805550c17');
INSERT INTO "attempts" VALUES(42,1,42,42,'finished','2026-03-01 12:48:35.373625','2026-03-01 12:48:52.623626','failed','verifier_failed',0,1,5.39127383039815072157e+02,9,NULL,303,NULL,570,0,0,1,2,2,0.0001,1,2.5e-05,1,1,1,1,0,'recovered','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','claude-sonnet-4-5@20250929','["coding"]','{"x": "\u00e9"}','/tmp/campaign-paired-runtime-x','88e7e309259609d35b19a57eb09775fa23b54da36bce7b3cae2067f805550c17','dcd09aca7ad14d267d32e1e12cda47785f79a4fa8556cc37b6251f11e52dedba');
INSERT INTO "attempts" VALUES(43,1,43,43,'finished','2026-03-01 12:49:44.373629','2026-03-01 12:50:01.623630','passed',NULL,1,0,6.87485699845435192399e+02,4,NULL,4014,NULL,820,25,1,NULL,0,0,0.1,1,0.0042,1,NULL,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101',NULL,'["coding"]','not json','/tmp/campaign-paired-runtime-x','dcd09aca7ad14d267d32e1e12cda47785f79a4fa8556cc37b6251f11e52dedba','84480c04a6336792c7831a876d4e4b79ed3452c3fcb9c29488f068347add7a55');
INSERT INTO "attempts" VALUES(44,1,44,44,'finished','2026-03-01 12:50:53.373633','2026-03-01 12:51:10.623634','passed',NULL,1,0,1.2e-05,1,NULL,3906,NULL,1,17,0,1,2,1,12.5,0,NULL,1,NULL,1,1,0,'forced','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101',NULL,'["legacy"]','{"catalog_digests": ["abababababababababababababababababababababababababababababababab"], "request_count": 3, "visible_schema_tokens": 1234, "disclosure_measurements": [{"profile": "coding", "active": true, "estimated_tokens": 77}]}','/tmp/campaign-paired-runtime-x','84480c04a6336792c7831a876d4e4b79ed3452c3fcb9c29488f068347add7a55','b3c0ad8c50a146ba7dcd4384dd9ebb8e6e3aeaf87e8d763e6c3618bd5f1db0ba');
INSERT INTO "attempts" VALUES(45,1,45,45,'finished','2026-03-01 12:52:02.373637','2026-03-01 12:52:19.623638','failed','verifier_failed',0,1,NULL,0,626070617891,1210,NULL,569,22,NULL,NULL,0,1,12.5,NULL,0.0042,NULL,1,1,1,0,'forced','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]','not json','/tmp/campaign-paired-runtime-x','b3c0ad8c50a146ba7dcd4384dd9ebb8e6e3aeaf87e8d763e6c3618bd5f1db0ba','e85296073c2f1e2bbe36cf1f66bd9c6dea1d6046ef2969eb3da54760c5569d1a');
INSERT INTO "attempts" VALUES(46,1,46,46,'interrupted','2026-03-01 12:53:11.373641','2026-03-01 12:53:28.623642','interrupted','interrupted',NULL,1,1.0e-05,1,457180843797,254,NULL,575,12,NULL,NULL,2,0,NULL,1,2.5e-05,0,1,1,1,0,'clean','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101',NULL,'["coding"]','{"catalog_digests": ["abababababababababababababababababababababababababababababababab"], "request_count": 6, "visible_schema_tokens": 1234, "disclosure_measurements": [{"profile": "coding", "active": true, "estimated_tokens": 77}]}','/tmp/campaign-paired-runtime-x','e85296073c2f1e2bbe36cf1f66bd9c6dea1d6046ef2969eb3da54760c5569d1a','70923afc6e6b712e70916fea1bfab41484ca0dc454ef5c64ad89c10db5b5a009');
INSERT INTO "attempts" VALUES(47,1,46,47,'finished','2026-03-01 12:54:20.373645','2026-03-01 12:54:37.623646','failed','verifier_failed',0,1,5.96834757725804252023e+02,4,891058185212,2574,NULL,819,1,3,NULL,1,2,NULL,1,0.0042,1,NULL,1,1,0,'forced','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','claude-sonnet-4-5@20250929','["coding"]','not json','/tmp/campaign-paired-runtime-x','70923afc6e6b712e70916fea1bfab41484ca0dc454ef5c64ad89c10db5b5a009','1ac47f9660129964c7ca51cdacfe095670436279817b71c63c0e6370b89a09ca');
INSERT INTO "attempts" VALUES(48,1,47,48,'finished','2026-03-01 12:55:29.373649','2026-03-01 12:55:46.623650','failed','verifier_failed',0,1,12.75,4,510319074766,1472,NULL,148,7,NULL,1,1,0,NULL,NULL,0.0042,1,NULL,1,1,0,'forced','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','modèle-ü','["coding"]','not json','/tmp/campaign-paired-runtime-x','1ac47f9660129964c7ca51cdacfe095670436279817b71c63c0e6370b89a09ca','fd85b09cdb3668599479f131b3110befd7de9e5a72ad00b0ccfe9a27a5cc03a4');
INSERT INTO "attempts" VALUES(49,1,48,49,'finished','2026-03-01 12:56:38.373653','2026-03-01 12:56:55.623654','passed',NULL,1,0,NULL,9,951655268304,2007,NULL,21,20,0,NULL,1,0,5.0e-05,0,0.0042,1,NULL,1,1,0,'recovered','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]','{"catalog_digests": ["abababababababababababababababababababababababababababababababab"], "request_count": 9, "visible_schema_tokens": 1234, "disclosure_measurements": [{"profile": "coding", "active": true, "estimated_tokens": 77}]}','/tmp/campaign-paired-runtime-x','fd85b09cdb3668599479f131b3110befd7de9e5a72ad00b0ccfe9a27a5cc03a4','db849b9f8052b0b5ca80a44036c112390ad3ffd07c8747e7c39478df938ab0b4');
INSERT INTO "attempts" VALUES(50,2,54,1,'finished','2026-03-01 12:58:39.123660','2026-03-01 12:58:56.373661','failed','verifier_failed',0,1,1.0e-05,1,NULL,1095,NULL,106,4,3,1,0,0,3.00000000000000044408e-01,0,0.0042,1,NULL,1,1,0,'recovered','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','sk-abcdefghijklmnopqrstuvwxyz0123','["legacy"]','not json','/tmp/campaign-paired-runtime-x','f7ce3835f23b17e3d26593ace32b0a37dd156a2af6269e63db11074947d142d4','5d757d4526b97f2415d4e50f3eb4e703b3c339e96a30f6c619e0edcb5dd123f5');
INSERT INTO "attempts" VALUES(51,2,61,2,'finished','2026-03-01 12:59:48.123664','2026-03-01 13:00:05.373665','failed','verifier_failed',0,1,12.75,5,NULL,4474,NULL,494,27,3,1,0,2,0.2,NULL,NULL,NULL,NULL,1,1,0,'clean','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101',NULL,'["legacy"]','not json','/tmp/campaign-paired-runtime-x','5d757d4526b97f2415d4e50f3eb4e703b3c339e96a30f6c619e0edcb5dd123f5','7a6cf854c21c115a1f11cdb104212fb9caabebff8d1a7ca264f5d7a0495cc5d7');
INSERT INTO "attempts" VALUES(52,2,69,3,'finished','2026-03-01 13:00:57.123668','2026-03-01 13:01:14.373669','passed',NULL,1,0,6.6576405841090877404e+02,2,NULL,4338,NULL,362,20,0,NULL,2,1,12.5,NULL,NULL,1,NULL,1,1,0,'clean','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','gpt-6.1-sol','["legacy"]','{"x": "\u00e9"}','/tmp/campaign-paired-runtime-x','7a6cf854c21c115a1f11cdb104212fb9caabebff8d1a7ca264f5d7a0495cc5d7','1626a54f8cecce9bca402fb6142a5ca305f811d022268b8ca727145d2886740c');
INSERT INTO "attempts" VALUES(53,2,76,4,'finished','2026-03-01 13:02:06.123672','2026-03-01 13:02:23.373673','failed','verifier_failed',0,1,NULL,8,932521998936,2102,NULL,683,21,NULL,1,1,2,NULL,NULL,0.0042,1,1,1,1,0,'forced','cgroup2','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','sk-abcdefghijklmnopqrstuvwxyz0123','["legacy"]','not json','/tmp/campaign-paired-runtime-x','1626a54f8cecce9bca402fb6142a5ca305f811d022268b8ca727145d2886740c','8ac9f6e498cea81bacb4ee4f04d65e47dc2e5d44afdc619ebaf5da640b115f15');
INSERT INTO "attempts" VALUES(54,2,87,5,'finished','2026-03-01 13:03:15.123676','2026-03-01 13:03:32.373677','failed','verifier_failed',0,1,1.0e-05,6,NULL,3527,NULL,152,18,1,NULL,0,2,0.2,0,0.0042,NULL,1,1,1,0,'recovered','subreaper-pidfd','efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef','0101010101010101010101010101010101010101010101010101010101010101','modèle-ü','["legacy"]','not json','/tmp/campaign-paired-runtime-x','8ac9f6e498cea81bacb4ee4f04d65e47dc2e5d44afdc619ebaf5da640b115f15','7809db5780d60a86577d02a93302fcacff404c6737bfd83d75cc01933ecff75e');
INSERT INTO "attempts" VALUES(55,2,65,-1,'running','2026-03-01 13:04:24.123680',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
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
	CONSTRAINT ck_campaigns_state CHECK (state IN ('planned', 'running', 'stopped', 'completed', 'interrupted')), 
	CONSTRAINT ck_campaigns_kind CHECK (kind IN ('paired', 'campaign', 'nonpaired')), 
	CONSTRAINT fk_campaigns_continues_campaign_id_campaigns FOREIGN KEY(continues_campaign_id) REFERENCES campaigns (id)
);
INSERT INTO "campaigns" VALUES(1,'campaign','stopped',1,'cleanup_unverified','custom',7,'{"agent": "custom", "kind": "campaign", "model": "offline:synthetic", "pricing_catalog_digest": "abababababababababababababababababababababababababababababababab", "providers": [{"agent": "offline", "basis": "synthetic", "name": "alpha"}, {"agent": "claude-code", "basis": "public list price", "name": "beta"}], "repetitions": 3, "seed": 7, "tasks": ["semver-precedence", "invoice-rounding", "csv-merge", "task-\u00e9t\u00e9"]}','f7ce3835f23b17e3d26593ace32b0a37dd156a2af6269e63db11074947d142d4',NULL,NULL,48,'{"all_scheduled_trials_ran": false, "attempted": 42, "not_attempted": 6, "scheduled": 48}','2026-03-01 12:00:17.373457',NULL,'2026-03-01 12:57:47.373657',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "campaigns" VALUES(2,'campaign','interrupted',1,'interrupted','custom',7,'{"agent": "custom", "kind": "campaign", "model": "offline:synthetic", "pricing_catalog_digest": "abababababababababababababababababababababababababababababababab", "providers": [{"agent": "offline", "basis": "synthetic", "name": "alpha"}, {"agent": "claude-code", "basis": "public list price", "name": "beta"}], "repetitions": 3, "seed": 7, "tasks": ["semver-precedence", "invoice-rounding", "csv-merge", "task-\u00e9t\u00e9"]}','f7ce3835f23b17e3d26593ace32b0a37dd156a2af6269e63db11074947d142d4',NULL,NULL,48,NULL,'2026-03-01 12:58:04.623658',NULL,'2026-03-01 13:04:41.373681',NULL,NULL,NULL,NULL,1,NULL);
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
	halted_attempt_id INTEGER, 
	CONSTRAINT pk_provider_leases PRIMARY KEY (id), 
	CONSTRAINT fk_provider_leases_campaign_id_campaigns FOREIGN KEY(campaign_id) REFERENCES campaigns (id), 
	CONSTRAINT uq_provider_leases_campaign_id_provider UNIQUE (campaign_id, provider)
);
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
	CONSTRAINT ck_trials_repetition_positive CHECK (repetition >= 1), 
	CONSTRAINT fk_trials_campaign_id_campaigns FOREIGN KEY(campaign_id) REFERENCES campaigns (id), 
	CONSTRAINT uq_trials_campaign_id_position UNIQUE (campaign_id, position), 
	CONSTRAINT ck_trials_status CHECK (status IN ('scheduled', 'admitted', 'finished', 'not_attempted')), 
	CONSTRAINT uq_trials_campaign_id_trial_id UNIQUE (campaign_id, trial_id), 
	CONSTRAINT fk_trials_carried_from_trial_pk_trials FOREIGN KEY(carried_from_trial_pk) REFERENCES trials (id)
);
INSERT INTO "trials" VALUES(1,1,'alpha/semver-precedence/r1','alpha/semver-precedence/r1/baseline','alpha','offline:synthetic','semver-precedence','baseline',1,0,0,'finished',NULL,'2026-03-01 12:01:26.373461',NULL);
INSERT INTO "trials" VALUES(2,1,'alpha/semver-precedence/r1','alpha/semver-precedence/r1/coding','alpha','offline:synthetic','semver-precedence','coding',1,1,1,'finished',NULL,'2026-03-01 12:02:35.373465',NULL);
INSERT INTO "trials" VALUES(3,1,'alpha/invoice-rounding/r1','alpha/invoice-rounding/r1/coding','alpha','offline:synthetic','invoice-rounding','coding',1,0,2,'finished',NULL,'2026-03-01 12:03:44.373469',NULL);
INSERT INTO "trials" VALUES(4,1,'alpha/invoice-rounding/r1','alpha/invoice-rounding/r1/baseline','alpha','offline:synthetic','invoice-rounding','baseline',1,1,3,'finished',NULL,'2026-03-01 12:06:02.373477',NULL);
INSERT INTO "trials" VALUES(5,1,'alpha/csv-merge/r1','alpha/csv-merge/r1/baseline','alpha','offline:synthetic','csv-merge','baseline',1,0,4,'finished',NULL,'2026-03-01 12:07:11.373481',NULL);
INSERT INTO "trials" VALUES(6,1,'alpha/csv-merge/r1','alpha/csv-merge/r1/coding','alpha','offline:synthetic','csv-merge','coding',1,1,5,'not_attempted','cleanup_unverified','2026-03-01 12:57:30.123656',NULL);
INSERT INTO "trials" VALUES(7,1,'alpha/task-été/r1','alpha/task-été/r1/coding','alpha','offline:synthetic','task-été','coding',1,0,6,'finished',NULL,'2026-03-01 12:08:20.373485',NULL);
INSERT INTO "trials" VALUES(8,1,'alpha/task-été/r1','alpha/task-été/r1/baseline','alpha','offline:synthetic','task-été','baseline',1,1,7,'finished',NULL,'2026-03-01 12:09:29.373489',NULL);
INSERT INTO "trials" VALUES(9,1,'alpha/semver-precedence/r2','alpha/semver-precedence/r2/coding','alpha','offline:synthetic','semver-precedence','coding',2,0,8,'finished',NULL,'2026-03-01 12:10:38.373493',NULL);
INSERT INTO "trials" VALUES(10,1,'alpha/semver-precedence/r2','alpha/semver-precedence/r2/baseline','alpha','offline:synthetic','semver-precedence','baseline',2,1,9,'finished',NULL,'2026-03-01 12:11:47.373497',NULL);
INSERT INTO "trials" VALUES(11,1,'alpha/invoice-rounding/r2','alpha/invoice-rounding/r2/baseline','alpha','offline:synthetic','invoice-rounding','baseline',2,0,10,'finished',NULL,'2026-03-01 12:14:05.373505',NULL);
INSERT INTO "trials" VALUES(12,1,'alpha/invoice-rounding/r2','alpha/invoice-rounding/r2/coding','alpha','offline:synthetic','invoice-rounding','coding',2,1,11,'finished',NULL,'2026-03-01 12:15:14.373509',NULL);
INSERT INTO "trials" VALUES(13,1,'alpha/csv-merge/r2','alpha/csv-merge/r2/coding','alpha','offline:synthetic','csv-merge','coding',2,0,12,'not_attempted','spend_limit','2026-03-01 12:15:31.623510',NULL);
INSERT INTO "trials" VALUES(14,1,'alpha/csv-merge/r2','alpha/csv-merge/r2/baseline','alpha','offline:synthetic','csv-merge','baseline',2,1,13,'finished',NULL,'2026-03-01 12:16:40.623514',NULL);
INSERT INTO "trials" VALUES(15,1,'alpha/task-été/r2','alpha/task-été/r2/baseline','alpha','offline:synthetic','task-été','baseline',2,0,14,'finished',NULL,'2026-03-01 12:17:49.623518',NULL);
INSERT INTO "trials" VALUES(16,1,'alpha/task-été/r2','alpha/task-été/r2/coding','alpha','offline:synthetic','task-été','coding',2,1,15,'finished',NULL,'2026-03-01 12:18:58.623522',NULL);
INSERT INTO "trials" VALUES(17,1,'alpha/semver-precedence/r3','alpha/semver-precedence/r3/baseline','alpha','offline:synthetic','semver-precedence','baseline',3,0,16,'not_attempted','cleanup_unverified','2026-03-01 12:57:30.123656',NULL);
INSERT INTO "trials" VALUES(18,1,'alpha/semver-precedence/r3','alpha/semver-precedence/r3/coding','alpha','offline:synthetic','semver-precedence','coding',3,1,17,'finished',NULL,'2026-03-01 12:21:16.623530',NULL);
INSERT INTO "trials" VALUES(19,1,'alpha/invoice-rounding/r3','alpha/invoice-rounding/r3/coding','alpha','offline:synthetic','invoice-rounding','coding',3,0,18,'finished',NULL,'2026-03-01 12:22:25.623534',NULL);
INSERT INTO "trials" VALUES(20,1,'alpha/invoice-rounding/r3','alpha/invoice-rounding/r3/baseline','alpha','offline:synthetic','invoice-rounding','baseline',3,1,19,'finished',NULL,'2026-03-01 12:23:34.623538',NULL);
INSERT INTO "trials" VALUES(21,1,'alpha/csv-merge/r3','alpha/csv-merge/r3/baseline','alpha','offline:synthetic','csv-merge','baseline',3,0,20,'finished',NULL,'2026-03-01 12:24:43.623542',NULL);
INSERT INTO "trials" VALUES(22,1,'alpha/csv-merge/r3','alpha/csv-merge/r3/coding','alpha','offline:synthetic','csv-merge','coding',3,1,21,'finished',NULL,'2026-03-01 12:25:52.623546',NULL);
INSERT INTO "trials" VALUES(23,1,'alpha/task-été/r3','alpha/task-été/r3/coding','alpha','offline:synthetic','task-été','coding',3,0,22,'finished',NULL,'2026-03-01 12:27:01.623550',NULL);
INSERT INTO "trials" VALUES(24,1,'alpha/task-été/r3','alpha/task-été/r3/baseline','alpha','offline:synthetic','task-été','baseline',3,1,23,'finished',NULL,'2026-03-01 12:28:10.623554',NULL);
INSERT INTO "trials" VALUES(25,1,'beta/semver-precedence/r1','beta/semver-precedence/r1/baseline','beta','offline:synthetic','semver-precedence','baseline',1,0,24,'finished',NULL,'2026-03-01 12:30:28.623562',NULL);
INSERT INTO "trials" VALUES(26,1,'beta/semver-precedence/r1','beta/semver-precedence/r1/coding','beta','offline:synthetic','semver-precedence','coding',1,1,25,'not_attempted','spend_limit','2026-03-01 12:30:45.873563',NULL);
INSERT INTO "trials" VALUES(27,1,'beta/invoice-rounding/r1','beta/invoice-rounding/r1/coding','beta','offline:synthetic','invoice-rounding','coding',1,0,26,'finished',NULL,'2026-03-01 12:31:54.873567',NULL);
INSERT INTO "trials" VALUES(28,1,'beta/invoice-rounding/r1','beta/invoice-rounding/r1/baseline','beta','offline:synthetic','invoice-rounding','baseline',1,1,27,'not_attempted','cleanup_unverified','2026-03-01 12:57:30.123656',NULL);
INSERT INTO "trials" VALUES(29,1,'beta/csv-merge/r1','beta/csv-merge/r1/baseline','beta','offline:synthetic','csv-merge','baseline',1,0,28,'finished',NULL,'2026-03-01 12:33:03.873571',NULL);
INSERT INTO "trials" VALUES(30,1,'beta/csv-merge/r1','beta/csv-merge/r1/coding','beta','offline:synthetic','csv-merge','coding',1,1,29,'finished',NULL,'2026-03-01 12:34:12.873575',NULL);
INSERT INTO "trials" VALUES(31,1,'beta/task-été/r1','beta/task-été/r1/coding','beta','offline:synthetic','task-été','coding',1,0,30,'finished',NULL,'2026-03-01 12:35:21.873579',NULL);
INSERT INTO "trials" VALUES(32,1,'beta/task-été/r1','beta/task-été/r1/baseline','beta','offline:synthetic','task-été','baseline',1,1,31,'finished',NULL,'2026-03-01 12:37:39.873587',NULL);
INSERT INTO "trials" VALUES(33,1,'beta/semver-precedence/r2','beta/semver-precedence/r2/coding','beta','offline:synthetic','semver-precedence','coding',2,0,32,'finished',NULL,'2026-03-01 12:38:48.873591',NULL);
INSERT INTO "trials" VALUES(34,1,'beta/semver-precedence/r2','beta/semver-precedence/r2/baseline','beta','offline:synthetic','semver-precedence','baseline',2,1,33,'finished',NULL,'2026-03-01 12:39:57.873595',NULL);
INSERT INTO "trials" VALUES(35,1,'beta/invoice-rounding/r2','beta/invoice-rounding/r2/baseline','beta','offline:synthetic','invoice-rounding','baseline',2,0,34,'finished',NULL,'2026-03-01 12:41:06.873599',NULL);
INSERT INTO "trials" VALUES(36,1,'beta/invoice-rounding/r2','beta/invoice-rounding/r2/coding','beta','offline:synthetic','invoice-rounding','coding',2,1,35,'finished',NULL,'2026-03-01 12:42:15.873603',NULL);
INSERT INTO "trials" VALUES(37,1,'beta/csv-merge/r2','beta/csv-merge/r2/coding','beta','offline:synthetic','csv-merge','coding',2,0,36,'finished',NULL,'2026-03-01 12:43:24.873607',NULL);
INSERT INTO "trials" VALUES(38,1,'beta/csv-merge/r2','beta/csv-merge/r2/baseline','beta','offline:synthetic','csv-merge','baseline',2,1,37,'finished',NULL,'2026-03-01 12:44:33.873611',NULL);
INSERT INTO "trials" VALUES(39,1,'beta/task-été/r2','beta/task-été/r2/baseline','beta','offline:synthetic','task-été','baseline',2,0,38,'not_attempted','cleanup_unverified','2026-03-01 12:57:30.123656',NULL);
INSERT INTO "trials" VALUES(40,1,'beta/task-été/r2','beta/task-été/r2/coding','beta','offline:synthetic','task-été','coding',2,1,39,'finished',NULL,'2026-03-01 12:46:51.873619',NULL);
INSERT INTO "trials" VALUES(41,1,'beta/semver-precedence/r3','beta/semver-precedence/r3/baseline','beta','offline:synthetic','semver-precedence','baseline',3,0,40,'finished',NULL,'2026-03-01 12:48:00.873623',NULL);
INSERT INTO "trials" VALUES(42,1,'beta/semver-precedence/r3','beta/semver-precedence/r3/coding','beta','offline:synthetic','semver-precedence','coding',3,1,41,'finished',NULL,'2026-03-01 12:49:09.873627',NULL);
INSERT INTO "trials" VALUES(43,1,'beta/invoice-rounding/r3','beta/invoice-rounding/r3/coding','beta','offline:synthetic','invoice-rounding','coding',3,0,42,'finished',NULL,'2026-03-01 12:50:18.873631',NULL);
INSERT INTO "trials" VALUES(44,1,'beta/invoice-rounding/r3','beta/invoice-rounding/r3/baseline','beta','offline:synthetic','invoice-rounding','baseline',3,1,43,'finished',NULL,'2026-03-01 12:51:27.873635',NULL);
INSERT INTO "trials" VALUES(45,1,'beta/csv-merge/r3','beta/csv-merge/r3/baseline','beta','offline:synthetic','csv-merge','baseline',3,0,44,'finished',NULL,'2026-03-01 12:52:36.873639',NULL);
INSERT INTO "trials" VALUES(46,1,'beta/csv-merge/r3','beta/csv-merge/r3/coding','beta','offline:synthetic','csv-merge','coding',3,1,45,'finished',NULL,'2026-03-01 12:54:54.873647',NULL);
INSERT INTO "trials" VALUES(47,1,'beta/task-été/r3','beta/task-été/r3/coding','beta','offline:synthetic','task-été','coding',3,0,46,'finished',NULL,'2026-03-01 12:56:03.873651',NULL);
INSERT INTO "trials" VALUES(48,1,'beta/task-été/r3','beta/task-été/r3/baseline','beta','offline:synthetic','task-été','baseline',3,1,47,'finished',NULL,'2026-03-01 12:57:12.873655',NULL);
INSERT INTO "trials" VALUES(49,2,'alpha/semver-precedence/r1','alpha/semver-precedence/r1/baseline','alpha','offline:synthetic','semver-precedence','baseline',1,0,0,'finished',NULL,'2026-03-01 12:58:04.623658',1);
INSERT INTO "trials" VALUES(50,2,'alpha/semver-precedence/r1','alpha/semver-precedence/r1/coding','alpha','offline:synthetic','semver-precedence','coding',1,1,1,'finished',NULL,'2026-03-01 12:58:04.623658',2);
INSERT INTO "trials" VALUES(51,2,'alpha/invoice-rounding/r1','alpha/invoice-rounding/r1/coding','alpha','offline:synthetic','invoice-rounding','coding',1,0,2,'finished',NULL,'2026-03-01 12:58:04.623658',3);
INSERT INTO "trials" VALUES(52,2,'alpha/invoice-rounding/r1','alpha/invoice-rounding/r1/baseline','alpha','offline:synthetic','invoice-rounding','baseline',1,1,3,'finished',NULL,'2026-03-01 12:58:04.623658',4);
INSERT INTO "trials" VALUES(53,2,'alpha/csv-merge/r1','alpha/csv-merge/r1/baseline','alpha','offline:synthetic','csv-merge','baseline',1,0,4,'finished',NULL,'2026-03-01 12:58:04.623658',5);
INSERT INTO "trials" VALUES(54,2,'alpha/csv-merge/r1','alpha/csv-merge/r1/coding','alpha','offline:synthetic','csv-merge','coding',1,1,5,'finished',NULL,'2026-03-01 12:59:13.623662',NULL);
INSERT INTO "trials" VALUES(55,2,'alpha/task-été/r1','alpha/task-été/r1/coding','alpha','offline:synthetic','task-été','coding',1,0,6,'finished',NULL,'2026-03-01 12:58:04.623658',7);
INSERT INTO "trials" VALUES(56,2,'alpha/task-été/r1','alpha/task-été/r1/baseline','alpha','offline:synthetic','task-été','baseline',1,1,7,'finished',NULL,'2026-03-01 12:58:04.623658',8);
INSERT INTO "trials" VALUES(57,2,'alpha/semver-precedence/r2','alpha/semver-precedence/r2/coding','alpha','offline:synthetic','semver-precedence','coding',2,0,8,'finished',NULL,'2026-03-01 12:58:04.623658',9);
INSERT INTO "trials" VALUES(58,2,'alpha/semver-precedence/r2','alpha/semver-precedence/r2/baseline','alpha','offline:synthetic','semver-precedence','baseline',2,1,9,'finished',NULL,'2026-03-01 12:58:04.623658',10);
INSERT INTO "trials" VALUES(59,2,'alpha/invoice-rounding/r2','alpha/invoice-rounding/r2/baseline','alpha','offline:synthetic','invoice-rounding','baseline',2,0,10,'finished',NULL,'2026-03-01 12:58:04.623658',11);
INSERT INTO "trials" VALUES(60,2,'alpha/invoice-rounding/r2','alpha/invoice-rounding/r2/coding','alpha','offline:synthetic','invoice-rounding','coding',2,1,11,'finished',NULL,'2026-03-01 12:58:04.623658',12);
INSERT INTO "trials" VALUES(61,2,'alpha/csv-merge/r2','alpha/csv-merge/r2/coding','alpha','offline:synthetic','csv-merge','coding',2,0,12,'finished',NULL,'2026-03-01 13:00:22.623666',NULL);
INSERT INTO "trials" VALUES(62,2,'alpha/csv-merge/r2','alpha/csv-merge/r2/baseline','alpha','offline:synthetic','csv-merge','baseline',2,1,13,'finished',NULL,'2026-03-01 12:58:04.623658',14);
INSERT INTO "trials" VALUES(63,2,'alpha/task-été/r2','alpha/task-été/r2/baseline','alpha','offline:synthetic','task-été','baseline',2,0,14,'finished',NULL,'2026-03-01 12:58:04.623658',15);
INSERT INTO "trials" VALUES(64,2,'alpha/task-été/r2','alpha/task-été/r2/coding','alpha','offline:synthetic','task-été','coding',2,1,15,'finished',NULL,'2026-03-01 12:58:04.623658',16);
INSERT INTO "trials" VALUES(65,2,'alpha/semver-precedence/r3','alpha/semver-precedence/r3/baseline','alpha','offline:synthetic','semver-precedence','baseline',3,0,16,'admitted',NULL,'2026-03-01 13:04:06.873679',NULL);
INSERT INTO "trials" VALUES(66,2,'alpha/semver-precedence/r3','alpha/semver-precedence/r3/coding','alpha','offline:synthetic','semver-precedence','coding',3,1,17,'finished',NULL,'2026-03-01 12:58:04.623658',18);
INSERT INTO "trials" VALUES(67,2,'alpha/invoice-rounding/r3','alpha/invoice-rounding/r3/coding','alpha','offline:synthetic','invoice-rounding','coding',3,0,18,'finished',NULL,'2026-03-01 12:58:04.623658',19);
INSERT INTO "trials" VALUES(68,2,'alpha/invoice-rounding/r3','alpha/invoice-rounding/r3/baseline','alpha','offline:synthetic','invoice-rounding','baseline',3,1,19,'finished',NULL,'2026-03-01 12:58:04.623658',20);
INSERT INTO "trials" VALUES(69,2,'alpha/csv-merge/r3','alpha/csv-merge/r3/baseline','alpha','offline:synthetic','csv-merge','baseline',3,0,20,'finished',NULL,'2026-03-01 13:01:31.623670',NULL);
INSERT INTO "trials" VALUES(70,2,'alpha/csv-merge/r3','alpha/csv-merge/r3/coding','alpha','offline:synthetic','csv-merge','coding',3,1,21,'finished',NULL,'2026-03-01 12:58:04.623658',22);
INSERT INTO "trials" VALUES(71,2,'alpha/task-été/r3','alpha/task-été/r3/coding','alpha','offline:synthetic','task-été','coding',3,0,22,'finished',NULL,'2026-03-01 12:58:04.623658',23);
INSERT INTO "trials" VALUES(72,2,'alpha/task-été/r3','alpha/task-été/r3/baseline','alpha','offline:synthetic','task-été','baseline',3,1,23,'finished',NULL,'2026-03-01 12:58:04.623658',24);
INSERT INTO "trials" VALUES(73,2,'beta/semver-precedence/r1','beta/semver-precedence/r1/baseline','beta','offline:synthetic','semver-precedence','baseline',1,0,24,'finished',NULL,'2026-03-01 12:58:04.623658',25);
INSERT INTO "trials" VALUES(74,2,'beta/semver-precedence/r1','beta/semver-precedence/r1/coding','beta','offline:synthetic','semver-precedence','coding',1,1,25,'scheduled',NULL,'2026-03-01 12:58:04.623658',NULL);
INSERT INTO "trials" VALUES(75,2,'beta/invoice-rounding/r1','beta/invoice-rounding/r1/coding','beta','offline:synthetic','invoice-rounding','coding',1,0,26,'finished',NULL,'2026-03-01 12:58:04.623658',27);
INSERT INTO "trials" VALUES(76,2,'beta/invoice-rounding/r1','beta/invoice-rounding/r1/baseline','beta','offline:synthetic','invoice-rounding','baseline',1,1,27,'finished',NULL,'2026-03-01 13:02:40.623674',NULL);
INSERT INTO "trials" VALUES(77,2,'beta/csv-merge/r1','beta/csv-merge/r1/baseline','beta','offline:synthetic','csv-merge','baseline',1,0,28,'finished',NULL,'2026-03-01 12:58:04.623658',29);
INSERT INTO "trials" VALUES(78,2,'beta/csv-merge/r1','beta/csv-merge/r1/coding','beta','offline:synthetic','csv-merge','coding',1,1,29,'finished',NULL,'2026-03-01 12:58:04.623658',30);
INSERT INTO "trials" VALUES(79,2,'beta/task-été/r1','beta/task-été/r1/coding','beta','offline:synthetic','task-été','coding',1,0,30,'finished',NULL,'2026-03-01 12:58:04.623658',31);
INSERT INTO "trials" VALUES(80,2,'beta/task-été/r1','beta/task-été/r1/baseline','beta','offline:synthetic','task-été','baseline',1,1,31,'finished',NULL,'2026-03-01 12:58:04.623658',32);
INSERT INTO "trials" VALUES(81,2,'beta/semver-precedence/r2','beta/semver-precedence/r2/coding','beta','offline:synthetic','semver-precedence','coding',2,0,32,'finished',NULL,'2026-03-01 12:58:04.623658',33);
INSERT INTO "trials" VALUES(82,2,'beta/semver-precedence/r2','beta/semver-precedence/r2/baseline','beta','offline:synthetic','semver-precedence','baseline',2,1,33,'finished',NULL,'2026-03-01 12:58:04.623658',34);
INSERT INTO "trials" VALUES(83,2,'beta/invoice-rounding/r2','beta/invoice-rounding/r2/baseline','beta','offline:synthetic','invoice-rounding','baseline',2,0,34,'finished',NULL,'2026-03-01 12:58:04.623658',35);
INSERT INTO "trials" VALUES(84,2,'beta/invoice-rounding/r2','beta/invoice-rounding/r2/coding','beta','offline:synthetic','invoice-rounding','coding',2,1,35,'finished',NULL,'2026-03-01 12:58:04.623658',36);
INSERT INTO "trials" VALUES(85,2,'beta/csv-merge/r2','beta/csv-merge/r2/coding','beta','offline:synthetic','csv-merge','coding',2,0,36,'finished',NULL,'2026-03-01 12:58:04.623658',37);
INSERT INTO "trials" VALUES(86,2,'beta/csv-merge/r2','beta/csv-merge/r2/baseline','beta','offline:synthetic','csv-merge','baseline',2,1,37,'finished',NULL,'2026-03-01 12:58:04.623658',38);
INSERT INTO "trials" VALUES(87,2,'beta/task-été/r2','beta/task-été/r2/baseline','beta','offline:synthetic','task-été','baseline',2,0,38,'finished',NULL,'2026-03-01 13:03:49.623678',NULL);
INSERT INTO "trials" VALUES(88,2,'beta/task-été/r2','beta/task-été/r2/coding','beta','offline:synthetic','task-été','coding',2,1,39,'finished',NULL,'2026-03-01 12:58:04.623658',40);
INSERT INTO "trials" VALUES(89,2,'beta/semver-precedence/r3','beta/semver-precedence/r3/baseline','beta','offline:synthetic','semver-precedence','baseline',3,0,40,'finished',NULL,'2026-03-01 12:58:04.623658',41);
INSERT INTO "trials" VALUES(90,2,'beta/semver-precedence/r3','beta/semver-precedence/r3/coding','beta','offline:synthetic','semver-precedence','coding',3,1,41,'finished',NULL,'2026-03-01 12:58:04.623658',42);
INSERT INTO "trials" VALUES(91,2,'beta/invoice-rounding/r3','beta/invoice-rounding/r3/coding','beta','offline:synthetic','invoice-rounding','coding',3,0,42,'finished',NULL,'2026-03-01 12:58:04.623658',43);
INSERT INTO "trials" VALUES(92,2,'beta/invoice-rounding/r3','beta/invoice-rounding/r3/baseline','beta','offline:synthetic','invoice-rounding','baseline',3,1,43,'finished',NULL,'2026-03-01 12:58:04.623658',44);
INSERT INTO "trials" VALUES(93,2,'beta/csv-merge/r3','beta/csv-merge/r3/baseline','beta','offline:synthetic','csv-merge','baseline',3,0,44,'finished',NULL,'2026-03-01 12:58:04.623658',45);
INSERT INTO "trials" VALUES(94,2,'beta/csv-merge/r3','beta/csv-merge/r3/coding','beta','offline:synthetic','csv-merge','coding',3,1,45,'finished',NULL,'2026-03-01 12:58:04.623658',46);
INSERT INTO "trials" VALUES(95,2,'beta/task-été/r3','beta/task-été/r3/coding','beta','offline:synthetic','task-été','coding',3,0,46,'finished',NULL,'2026-03-01 12:58:04.623658',47);
INSERT INTO "trials" VALUES(96,2,'beta/task-été/r3','beta/task-été/r3/baseline','beta','offline:synthetic','task-été','baseline',3,1,47,'finished',NULL,'2026-03-01 12:58:04.623658',48);
CREATE INDEX ix_ledger_attempt_id ON ledger (attempt_id);
CREATE INDEX ix_attempts_campaign_id ON attempts (campaign_id);
CREATE INDEX ix_attempts_trial_pk ON attempts (trial_pk);
CREATE INDEX ix_trials_campaign_id ON trials (campaign_id);
CREATE INDEX ix_trials_campaign_id_status ON trials (campaign_id, status);
CREATE INDEX ix_spend_reservations_campaign_id ON spend_reservations (campaign_id);
COMMIT;
