#!/usr/bin/env sh
# Gives each service its own configuration directory, deploy/config/<service>/, holding copies of
# only the files that service reads: docker-compose.yml mounts each at /etc/caseloop in that one
# service, so no host directory is shared by two containers. The operator edits deploy/config/*.yaml
# (and flows/); run this after every edit (the services read their copies). It replaces only the
# directories below, and refuses, changing nothing, while a file a service reads is missing.
# Usage: sh deploy/config.sh [config-dir]   (default: deploy/config beside this script)
set -eu
config="${1:-$(dirname "$0")/config}"
cd "$config"

# Each line: a service, then the files it reads (its *_FILE keys under /etc/caseloop in compose;
# the evidence service also runs the repositories' client flows, relative to repositories.yaml).
MAP='intake binding.yaml
coordinator repositories.yaml channel-routes.yaml
worker repositories.yaml agent-routes.yaml
evidence repositories.yaml flows
console binding.yaml'

missing=0
for f in $(printf '%s\n' "$MAP" | cut -d' ' -f2- | tr ' ' '\n' | sort -u); do
  if [ ! -e "$f" ]; then
    echo "deploy/config.sh: $config/$f is missing (copy ${f%.yaml}.example.yaml to it and edit it)" >&2
    missing=1
  fi
done
[ "$missing" = 0 ] || exit 1

printf '%s\n' "$MAP" | while read -r service files; do
  rm -rf "$service.new"
  mkdir "$service.new"
  for f in $files; do cp -R "$f" "$service.new/"; done
  # The containers run as uid 1000: readable by all, writable by none but the operator.
  chmod -R u+rwX,go+rX,go-w "$service.new"
  rm -rf "$service"
  mv "$service.new" "$service"
  echo "$config/$service: $files"
done
