-- Each app's own login role (docker-compose.yml): no attribute, no membership; the migrations
-- (run as the owner, crew) grant each one its own schema. Idempotent: run on every `up`.
DO $$ BEGIN CREATE ROLE svc_auth LOGIN NOINHERIT PASSWORD 'sandbox-postgres-auth-password'; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE svc_consent LOGIN NOINHERIT PASSWORD 'sandbox-postgres-consent-password'; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE svc_crew LOGIN NOINHERIT PASSWORD 'sandbox-postgres-crew-password'; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE svc_sponsorship LOGIN NOINHERIT PASSWORD 'sandbox-postgres-sponsorship-password'; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE svc_webhooks LOGIN NOINHERIT PASSWORD 'sandbox-postgres-webhooks-password'; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
