#!/usr/bin/env sh
# Creates the secrets docker-compose.yml mounts, once: random values, files readable by their owner only.
# Existing files are kept, so re-running never rotates a password under a running stack.
set -eu
dir="$(dirname "$0")/secrets"
mkdir -p "$dir"
umask 077
for name in provisioner_nats_password audit_nats_password \
  intake_nats_password coordinator_nats_password worker_nats_password \
  lease_nats_password evidence_nats_password monitor_nats_password console_nats_password \
  console_session_secret postgres_password minio_root_user minio_root_password; do
  f="$dir/$name"
  # A letter first: nats-server reads a `$VAR` password as a config value, and one starting with a
  # digit is taken for a number and refused ("variable reference ... could not be parsed").
  [ -s "$f" ] || printf 'p%s' "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$f"
  chmod 600 "$f"
done
# The projection database URL carries the postgres password.
[ -s "$dir/caseloop_database_url" ] ||
  printf 'postgres://caseloop:%s@postgres:5432/caseloop' "$(cat "$dir/postgres_password")" > "$dir/caseloop_database_url"
# The bot token comes from Discord's developer portal; intake refuses to start until it is there.
[ -e "$dir/discord_token" ] || : > "$dir/discord_token"
# The agent runtime's provider API key (deploy/config/agent-routes.yaml): put it there yourself.
[ -e "$dir/agent_api_key" ] || : > "$dir/agent_api_key"
chmod 600 "$dir/caseloop_database_url" "$dir/discord_token" "$dir/agent_api_key"
echo "secrets in $dir"
