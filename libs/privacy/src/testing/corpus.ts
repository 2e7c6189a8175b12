import { PrivacyCategory } from '../categories';

/**
 * A labelled corpus for the scanner: realistic positives (each secret or datum the scanner must find,
 * with its category) and near misses from real check logs, diffs and reports that it must leave alone.
 * Every credential here is fabricated.
 */
export interface Positive {
  name: string;
  text: string;
  expect: { category: PrivacyCategory; value: string }[];
  ipv4?: boolean;
}

export interface Negative {
  name: string;
  text: string;
  ipv4?: boolean;
}

/** Deterministic pseudo-random base64, standing in for an inlined screenshot in a log. */
function pseudoBase64(bytes: number, seed: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let x = seed;
  let out = '';
  for (let i = 0; i < Math.ceil((bytes * 4) / 3); i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += alphabet[x % 64];
  }
  return out + '==';
}

const GHP = 'ghp_R4nd0mL00kingT0k3nV4lu3F0rT3st1ng9Qz';
const GHO = 'gho_16C7e42F292c6912E7710c838347Ae178B4a';
const GHS = 'ghs_Xk2Lm9Pq4Rs7Tv1Wy3Za5Bc8De0Fg6Hj2Kn9';
const PAT =
  'github_pat_11ABCDEFG0aBcDeFgHiJkLmN_o1P2q3R4s5T6u7V8w9X0yZ1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R9s0T1';
const DISCORD = 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.Zx9yW8vU7tS6rQ5pO4nM3lK2jI1hG0fE9dC8b';
const DISCORD2 = 'MTA5ODc2NTQzMjEwOTg3NjU0Mw.G7kLmN.q1W2e3R4t5Y6u7I8o9P0aSdFgHjKlZxCvBn';
const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const RSA = [
  '-----BEGIN RSA PRIVATE KEY-----',
  'MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB',
  'aFDrBz9vFqU4yVO2ciTNFeDZUv4yOkmQNhcl7eFfdQvHCkpLUtHnPqsJxbJ3tZ8e',
  'kP0sQ3rGf1Lc6yH2nX8wT5vB9mA4dE7uZ0oI3pK6qR9sW2xY5aC8bF1gJ4hM7nL0==',
  '-----END RSA PRIVATE KEY-----',
].join('\n');
const OPENSSH = [
  '-----BEGIN OPENSSH PRIVATE KEY-----',
  'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
  'QyNTUxOQAAACDkJ8p2F9hWf1mQ4uVtXyZ3aBcDeFgHiJkLmNoPqRsTuAAAAJgAAAAAAAAA',
  '-----END OPENSSH PRIVATE KEY-----',
].join('\n');
const PEM_ESCAPED =
  '-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\\n-----END PRIVATE KEY-----\\n';

export const POSITIVES: Positive[] = [
  {
    name: 'discord token in env dump',
    text: `DISCORD_TOKEN=${DISCORD}\nNODE_ENV=production`,
    expect: [{ category: 'discord_token', value: DISCORD }],
  },
  {
    name: 'discord token in a log line',
    text: `[intake] logging in as bot with ${DISCORD2} (shard 0)`,
    expect: [{ category: 'discord_token', value: DISCORD2 }],
  },
  {
    name: 'discord bot authorization header',
    text: `> Authorization: Bot ${DISCORD}`,
    expect: [{ category: 'discord_token', value: DISCORD }],
  },
  {
    name: 'discord webhook url',
    text: 'POST https://discord.com/api/webhooks/1234567890123456789/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrStUvWxYz01 -> 204',
    expect: [
      {
        category: 'discord_webhook',
        value: 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrStUvWxYz01',
      },
    ],
  },
  {
    name: 'classic github token',
    text: `git config --global url."https://${GHP}@github.com/".insteadOf`,
    expect: [{ category: 'github_token', value: GHP }],
  },
  {
    name: 'oauth github token in json',
    text: `{"access_token":"${GHO}","token_type":"bearer","scope":"repo"}`,
    expect: [{ category: 'github_token', value: GHO }],
  },
  {
    name: 'installation token in a clone url',
    text: `Cloning into 'app'... fatal: could not read from https://x-access-token:${GHS}@github.com/acme/app.git`,
    expect: [{ category: 'github_token', value: GHS }],
  },
  {
    name: 'fine-grained pat',
    text: `export GH_TOKEN=${PAT}`,
    expect: [{ category: 'github_token', value: PAT }],
  },
  {
    name: 'aws credentials file',
    text: '[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nregion = eu-west-1',
    expect: [
      { category: 'aws_access_key_id', value: 'AKIAIOSFODNN7EXAMPLE' },
      { category: 'aws_secret_access_key', value: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
    ],
  },
  {
    name: 'aws keys in json',
    text: '{ "AccessKeyId": "ASIAZ7QX4EXAMPLE2ABC", "SecretAccessKey": "9drTJvcXLB89EXAMPLELB8923FB892xMFI+aBcDe" }',
    expect: [
      { category: 'aws_access_key_id', value: 'ASIAZ7QX4EXAMPLE2ABC' },
      { category: 'aws_secret_access_key', value: '9drTJvcXLB89EXAMPLELB8923FB892xMFI+aBcDe' },
    ],
  },
  {
    name: 'slack bot token',
    text: 'SLACK_BOT_TOKEN=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
    expect: [{ category: 'slack_token', value: 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx' }],
  },
  {
    name: 'slack user token in prose',
    text: 'I pasted my token xoxp-2210535565-2210535573-2210535599-8b1d3c9a2e4f6a7b8c9d0e1f2a3b4c5d by mistake',
    expect: [
      {
        category: 'slack_token',
        value: 'xoxp-2210535565-2210535573-2210535599-8b1d3c9a2e4f6a7b8c9d0e1f2a3b4c5d',
      },
    ],
  },
  {
    name: 'slack webhook',
    text: 'notify: https://hooks.slack.com/services/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',
    expect: [{ category: 'slack_webhook', value: 'T024BE7LD/B01HJQ2K4PS/q8ZbTzRc3xYwVnLmKpJhGfDs' }],
  },
  {
    name: 'api_key assignment',
    text: 'api_key=4f9d2c1b7e8a6d5c3b2a1f0e9d8c7b6a',
    expect: [{ category: 'api_key', value: '4f9d2c1b7e8a6d5c3b2a1f0e9d8c7b6a' }],
  },
  {
    name: 'x-api-key header',
    text: 'X-Api-Key: Zk3mP9qL2wR8tY5uI1oE7aS4dF6gH0jK',
    expect: [{ category: 'api_key', value: 'Zk3mP9qL2wR8tY5uI1oE7aS4dF6gH0jK' }],
  },
  {
    name: 'camelCase access token in json',
    text: '{"user":"u1","accessToken":"a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6","expiresIn":3600}',
    expect: [{ category: 'api_key', value: 'a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6' }],
  },
  {
    name: 'yaml client secret',
    text: 'oauth:\n  client_id: caseloop-app\n  client_secret: Qm9vYmFyLWNsaWVudC1zZWNyZXQtMTIz\n',
    expect: [{ category: 'api_key', value: 'Qm9vYmFyLWNsaWVudC1zZWNyZXQtMTIz' }],
  },
  {
    name: 'npmrc auth token',
    text: '//registry.npmjs.org/:_authToken=npm_aBcD1234eFgH5678iJkL9012mNoP3456qRsT',
    expect: [{ category: 'api_key', value: 'npm_aBcD1234eFgH5678iJkL9012mNoP3456qRsT' }],
  },
  {
    name: 'openai style key',
    text: 'OPENAI_API_KEY=sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90',
    expect: [{ category: 'api_key', value: 'sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90' }],
  },
  {
    name: 'token in a query string',
    text: 'GET /oauth/cb?code=x&access_token=4f9d2c1b7e8a6d5c3b2a1f0e9d8c7b6a&state=xyz HTTP/1.1',
    expect: [{ category: 'api_key', value: '4f9d2c1b7e8a6d5c3b2a1f0e9d8c7b6a' }],
  },
  {
    name: 'bearer header in curl -v output',
    text: '> GET /v1/orders HTTP/1.1\n> Host: api.shop.test\n> Authorization: Bearer 8f7d6c5b4a3e2d1c0b9a8f7e6d5c4b3a2\n',
    expect: [{ category: 'authorization', value: '8f7d6c5b4a3e2d1c0b9a8f7e6d5c4b3a2' }],
  },
  {
    name: 'basic auth header',
    text: '"authorization": "Basic YWxpY2U6czNjcjN0LXBhc3N3b3Jk"',
    expect: [{ category: 'authorization', value: 'YWxpY2U6czNjcjN0LXBhc3N3b3Jk' }],
  },
  { name: 'bearer jwt', text: `Authorization: Bearer ${JWT}`, expect: [{ category: 'jwt', value: JWT }] },
  {
    name: 'jwt in a cookie',
    text: `Set-Cookie: session=${JWT}; Path=/; HttpOnly`,
    expect: [{ category: 'jwt', value: JWT }],
  },
  {
    name: 'rsa private key',
    text: `writing key.pem\n${RSA}\ndone`,
    expect: [{ category: 'private_key', value: RSA }],
  },
  {
    name: 'openssh private key',
    text: `$ cat ~/.ssh/id_ed25519\n${OPENSSH}\n`,
    expect: [{ category: 'private_key', value: OPENSSH }],
  },
  {
    name: 'escaped pem in a service account',
    text: `{"type":"service_account","private_key":"${PEM_ESCAPED}","client_email":"ci@proj.iam.gserviceaccount.com"}`,
    expect: [
      { category: 'private_key', value: PEM_ESCAPED.slice(0, -2) },
      { category: 'email', value: 'ci@proj.iam.gserviceaccount.com' },
    ],
  },
  {
    name: 'truncated private key',
    text: 'key: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oD\n[output truncated]',
    expect: [
      {
        category: 'private_key',
        value: '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oD',
      },
    ],
  },
  {
    name: 'postgres url with password',
    text: 'DATABASE_URL=postgres://app:Sup3rS3cret@db.internal:5432/shop',
    expect: [{ category: 'url_credentials', value: 'app:Sup3rS3cret' }],
  },
  {
    name: 'mongodb srv url',
    text: 'connecting to mongodb+srv://admin:p%40ssw0rd@cluster0.ab1cd.mongodb.net/test',
    expect: [{ category: 'url_credentials', value: 'admin:p%40ssw0rd' }],
  },
  {
    name: 'redis url with empty user',
    text: 'REDIS_URL=redis://:r3d1sPass@cache:6379/0',
    expect: [{ category: 'url_credentials', value: ':r3d1sPass' }],
  },
  {
    name: 'https url with user and password',
    text: 'Downloading https://deploy:hunter2@artifacts.acme.io/app.tgz',
    expect: [{ category: 'url_credentials', value: 'deploy:hunter2' }],
  },
  {
    name: 'ado connection string',
    text: 'Server=db.internal;Database=shop;User Id=sa;Password=Sup3rS3cret;TrustServerCertificate=true',
    expect: [{ category: 'password', value: 'Sup3rS3cret' }],
  },
  {
    name: 'libpq dsn',
    text: 'dsn: host=db user=app password=pa55word dbname=shop',
    expect: [{ category: 'password', value: 'pa55word' }],
  },
  {
    name: 'quoted password in yaml',
    text: 'DB_PASSWORD: "S3cr3t-P@ss w0rd"',
    expect: [{ category: 'password', value: 'S3cr3t-P@ss w0rd' }],
  },
  {
    name: 'spring property',
    text: 'spring.datasource.password=changeit2024',
    expect: [{ category: 'password', value: 'changeit2024' }],
  },
  {
    name: 'password in a diff',
    text: "+  const adminPassword = 'letmein!';",
    expect: [{ category: 'password', value: 'letmein!' }],
  },
  {
    name: 'author email in git log',
    text: 'commit 3f2a9c1e7b4d5a6f8e9d0c1b2a3f4e5d6c7b8a9f\nAuthor: Jane Doe <jane.doe@acme-corp.com>',
    expect: [{ category: 'email', value: 'jane.doe@acme-corp.com' }],
  },
  {
    name: 'plus-addressed email',
    text: 'please reply to bob.smith+bugs@gmail.com.',
    expect: [{ category: 'email', value: 'bob.smith+bugs@gmail.com' }],
  },
  {
    name: 'email in a diff',
    text: "-  reporter: 'old'\n+  reporter: 'ana.lima@mail.co.uk'",
    expect: [{ category: 'email', value: 'ana.lima@mail.co.uk' }],
  },
  {
    name: 'us phone with country code',
    text: 'Call me at +1 (415) 555-0132 after 5pm',
    expect: [{ category: 'phone', value: '+1 (415) 555-0132' }],
  },
  {
    name: 'uk phone international',
    text: 'office: +44 20 7946 0958',
    expect: [{ category: 'phone', value: '+44 20 7946 0958' }],
  },
  {
    name: 'german mobile international',
    text: 'Handy +49 151 23456789, bitte',
    expect: [{ category: 'phone', value: '+49 151 23456789' }],
  },
  {
    name: 'french international',
    text: 'tél. +33 1 23 45 67 89',
    expect: [{ category: 'phone', value: '+33 1 23 45 67 89' }],
  },
  {
    name: 'e164 without spaces',
    text: 'sms sent to +4915123456789 ok',
    expect: [{ category: 'phone', value: '+4915123456789' }],
  },
  {
    name: 'us national parens',
    text: 'customer phone (415) 555-0132',
    expect: [{ category: 'phone', value: '(415) 555-0132' }],
  },
  {
    name: 'us national dashes',
    text: 'phone=415-555-0132',
    expect: [{ category: 'phone', value: '415-555-0132' }],
  },
  {
    name: 'us national dots',
    text: 'reach them on 415.555.0132.',
    expect: [{ category: 'phone', value: '415.555.0132' }],
  },
  {
    name: 'uk national',
    text: 'ring 020 7946 0958 or 07700 900123',
    expect: [
      { category: 'phone', value: '020 7946 0958' },
      { category: 'phone', value: '07700 900123' },
    ],
  },
  {
    name: 'german national',
    text: 'Tel.: (030) 12345678',
    expect: [{ category: 'phone', value: '(030) 12345678' }],
  },
  {
    name: 'french national',
    text: 'mon numéro: 06 12 34 56 78',
    expect: [{ category: 'phone', value: '06 12 34 56 78' }],
  },
  {
    name: 'stripe and google keys in a dotenv file',
    text: 'STRIPE_SECRET_KEY=sk_live_51Hx9aBcDeFgHiJkLmNoPqRsTu\nGOOGLE_MAPS_KEY=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY',
    expect: [
      { category: 'api_key', value: 'sk_live_51Hx9aBcDeFgHiJkLmNoPqRsTu' },
      { category: 'api_key', value: 'AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY' },
    ],
  },
  {
    name: 'pgp private key block',
    text: '-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF2lnPIBCADQ8l1rG5c3mYfZ0xq4\n=Xy9z\n-----END PGP PRIVATE KEY BLOCK-----',
    expect: [
      {
        category: 'private_key',
        value:
          '-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF2lnPIBCADQ8l1rG5c3mYfZ0xq4\n=Xy9z\n-----END PGP PRIVATE KEY BLOCK-----',
      },
    ],
  },
  {
    name: 'jwt in a query string',
    text: `GET /callback?access_token=${JWT}&state=xyz 302`,
    expect: [{ category: 'jwt', value: JWT }],
  },
  {
    name: 'tel link and toll-free number',
    text: '<a href="tel:+14155550132">call</a> or 1-800-555-0199',
    expect: [
      { category: 'phone', value: '+14155550132' },
      { category: 'phone', value: '1-800-555-0199' },
    ],
  },
  {
    name: 'public ipv4 when asked',
    text: 'login from 81.2.69.160 failed',
    ipv4: true,
    expect: [{ category: 'ipv4', value: '81.2.69.160' }],
  },
];

const PNG = pseudoBase64(6000, 7);

export const NEGATIVES: Negative[] = [
  {
    name: 'git shas',
    text: 'commit 3f2a9c1e7b4d5a6f8e9d0c1b2a3f4e5d6c7b8a9f\nMerge: 3f2a9c1 7b4d5a6\nHEAD is now at 0a1b2c3d fix(ui): spacing',
  },
  {
    name: 'sha-256 revision and digests',
    text: 'revision 9b2f0c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9\nsha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  },
  {
    name: 'uuids',
    text: 'request 123e4567-e89b-12d3-a456-426614174000 trace 550e8400-e29b-41d4-a716-446655440000 job 12345678-1234-1234-1234-123456789012',
  },
  {
    name: 'semver and package specs',
    text: 'nats@2.29.3 typescript 5.9.3 node v20.11.1 @nestjs/core@11.2.10 Chromium 120.0.6099.109 version 1.2.3.4 0.29.3',
  },
  {
    name: 'timestamps',
    text: '2026-11-29T20:16:00.123Z [2026-11-29 20:16:00,123] 1732912345678 Sun Nov 29 20:16:00 UTC 2026 29.11.2026 11/29/2026 elapsed 00:01:23.456',
  },
  { name: 'base64 image in a log', text: `<img src="data:image/png;base64,${PNG}">` },
  {
    name: 'npm integrity',
    text: '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXGmxv3nD1rJgrPq1zv0vJxBR6Q=="',
  },
  {
    name: 'ids',
    text: 'case C01JD4X5K6M7N8P9Q0R1S2T3V4 task T01JD4X5K6M7N8P9Q0R1S2T3V5 message 1234567890123456789 channel 987654321098765432',
  },
  {
    name: 'jest summary',
    text: 'Tests:       1 failed, 41 passed, 42 total\nTime:        3.456 s\n    at Object.<anonymous> (src/cart/cart.service.ts:112:34)',
  },
  {
    name: 'numbers',
    text: 'Downloaded 1 234 567 bytes for $1,234.56 on port 5432, pid 12345, id 0123456789, took 12.345 ms, 0.123 s',
  },
  { name: 'hexdump', text: '00000010  01 02 03 04 05 06 07 08  09 0a 0b 0c 0d 0e 0f 10  |................|' },
  { name: 'isbn and order numbers', text: 'ISBN 978-3-16-148410-0, order 2024-0001-1234, build 20261129.3' },
  {
    name: 'password in typescript',
    text: 'password: string;\npassword?: z.string().min(8),\nconst password = req.body.password;\nif (!password) throw new Error("password required")',
  },
  {
    name: 'password placeholders',
    text: 'password: \'********\'\n"password": "<your password>"\nDB_PASSWORD=${DB_PASSWORD}\npassword=$PGPASSWORD',
  },
  { name: 'the shell working directory', text: 'PWD=/home/runner/work/app/app\nOLDPWD=/home/runner' },
  {
    name: 'token-ish keys that are not secrets',
    text: "token_type: 'Bearer'\nmax_tokens: 4096\nconst tokenizer = new Tokenizer()\nsecret_name: prod-db-secret\ntokens: 1234567890123456",
  },
  {
    name: 'secrets by reference',
    text: 'apiKey: process.env.OPENAI_API_KEY,\ntoken: ${{ secrets.GITHUB_TOKEN }}\nAuthorization: Bearer ${token}\nAuthorization: Bearer <token>',
  },
  {
    name: 'urls without credentials',
    text: 'https://github.com/acme/app/pull/12 postgres://postgres@127.0.0.1:5432/test http://localhost:3000/login?next=/a&email=',
  },
  { name: 'git remotes', text: 'git@github.com:acme/app.git ssh://git@github.com/acme/app.git' },
  {
    name: 'at-signs in code',
    text: "import '@types/node';\n@EventPattern('LeaseGranted')\nassets/icon@2x.png\nnpm install zod@4.6.7",
  },
  { name: 'addresses when ipv4 is off', text: 'listening on 127.0.0.1:4222, peer 81.2.69.160' },
  {
    name: 'private addresses when ipv4 is on',
    ipv4: true,
    text: 'listening on 127.0.0.1:4222 and 10.0.0.12, gateway 192.168.1.20, doc 203.0.113.9, 0.0.0.0',
  },
  { name: 'jwt-shaped but not a jwt', text: 'eyJustKidding.thisIsAsentence.notAtoken' },
  {
    name: 'discord-shaped but not a token',
    text: 'MyComponentNameIsVeryLong.render.thisIsAPropertyNameThatIsLong',
  },
  {
    name: 'linter and compiler output',
    text: "  12:5  error  'password' is defined but never used  no-unused-vars\nsrc/auth.ts(12,5): error TS2339: Property 'token' does not exist on type 'Session'.\n 1 file changed, 12 insertions(+), 3 deletions(-)\n@@ -12,7 +12,8 @@ export class AuthService {",
  },
  {
    name: 'readable identifiers assigned to secret-sounding keys',
    text: "const AUTH_TOKEN = 'auth_token_storage_key_v2';\nexport const SECRET = 'caseloop-signing-secret-name';\nx-request-id: 4f9d2c1b7e8a6d5c3b2a1f0e9d8c7b6a",
  },
  {
    name: 'camel-case names assigned to credential-sounding keys',
    text: 'exports.SignatureV4SignWithCredentials = SignatureV4SignWithCredentials;\nconst refreshToken = RefreshTokenFromStorage2;',
  },
  {
    name: 'masked values in a ci log',
    text: 'GITHUB_TOKEN: ***\nNPM_TOKEN=[MASKED]\npassword: ${{ secrets.DB_PASSWORD }}',
  },
  {
    name: 'time zones and diffstats',
    text: '2026-11-29 20:16:00 +0100, +1234 -567, +12.5%, (555) 123-4567 is fictional',
  },
  {
    name: 'prose mentioning secrets',
    text: 'The token expired, so I rotated the api key and reset my password. Contact support.',
  },
];

/**
 * Written after the detectors and the corpus above, and run once before any change: an honest
 * held-out check. What it found on that first run is recorded in the test that prints it.
 */
export const HELD_OUT_POSITIVES: Positive[] = [
  {
    name: 'uuid api token via heroku cli',
    text: 'heroku config:set API_TOKEN=2f1e0d9c-8b7a-6f5e-4d3c-2b1a0f9e8d7c',
    expect: [{ category: 'api_key', value: '2f1e0d9c-8b7a-6f5e-4d3c-2b1a0f9e8d7c' }],
  },
  {
    name: 'google oauth client secret in json',
    text: '{"client_id":"1234.apps.googleusercontent.com","client_secret": "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"}',
    expect: [{ category: 'api_key', value: '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' }],
  },
  {
    name: 'github token header in curl',
    text: 'curl -H "Authorization: token ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8N" https://api.github.com/user',
    expect: [{ category: 'github_token', value: 'ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8N' }],
  },
  {
    name: 'reporter signature',
    text: 'Reported by María García <maria.garcia@empresa.es>, tel +34 612 34 56 78',
    expect: [
      { category: 'email', value: 'maria.garcia@empresa.es' },
      { category: 'phone', value: '+34 612 34 56 78' },
    ],
  },
  {
    name: 'mysql url',
    text: 'DB=mysql://root:toor@10.0.0.5:3306/app',
    expect: [{ category: 'url_credentials', value: 'root:toor' }],
  },
  {
    name: 'slack webhook env',
    text: 'SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T0AAA1111/B0BBB2222/abcdefghijklmnopqrstuvwx',
    expect: [{ category: 'slack_webhook', value: 'T0AAA1111/B0BBB2222/abcdefghijklmnopqrstuvwx' }],
  },
  {
    name: 'aws secret in yaml',
    text: 'aws_secret_access_key: "Zx3Yw5Vu7Ts9Rq1Po3Nm5Lk7Ji9Hg1Fe3Dc5Ba7Q"',
    expect: [{ category: 'aws_secret_access_key', value: 'Zx3Yw5Vu7Ts9Rq1Po3Nm5Lk7Ji9Hg1Fe3Dc5Ba7Q' }],
  },
  {
    name: 'us phone with extension',
    text: 'Call (212) 555-0187 ext. 4',
    expect: [{ category: 'phone', value: '(212) 555-0187' }],
  },
  {
    name: 'exported openai key',
    text: 'export OPENAI_API_KEY="sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD"',
    expect: [{ category: 'api_key', value: 'sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD' }],
  },
  {
    name: 'base64 token in yaml',
    text: "token: 'dGhpcyBpcyBhIHNlY3JldCB0b2tlbiAxMjM0'",
    expect: [{ category: 'api_key', value: 'dGhpcyBpcyBhIHNlY3JldCB0b2tlbiAxMjM0' }],
  },
  {
    name: 'smtp url with symbols in the password',
    text: 'MAIL_URL=smtp://mailer:Pa$$w0rd!@smtp.example.com:587',
    expect: [{ category: 'url_credentials', value: 'mailer:Pa$$w0rd!' }],
  },
  {
    name: 'passphrase with spaces',
    text: 'passwd = "correct horse battery staple"',
    expect: [{ category: 'password', value: 'correct horse battery staple' }],
  },
];

export const HELD_OUT_NEGATIVES: Negative[] = [
  { name: 'cypress selectors', text: "cy.get('[data-test=password-input]').type(Cypress.env('PASSWORD'))" },
  {
    name: 'oauth error body',
    text: 'Request failed with status code 401: {"error":"invalid_token","error_description":"The access token expired"}',
  },
  { name: 'sha1', text: 'sha1: 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12' },
  {
    name: 'user agent',
    text: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.109 Safari/537.36',
  },
  {
    name: 'image digest',
    text: 'docker pull ghcr.io/acme/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
  },
  {
    name: 'stack frame',
    text: 'at Object.<anonymous> (/home/runner/work/app/app/node_modules/jest-circus/build/utils.js:298:28)',
  },
  { name: 'coverage line', text: 'Coverage: 87.65% (1234/1408) lines, 412/500 branches' },
  { name: 'order number and date', text: 'Order #100-200-3000 shipped on 2026-11-29' },
  { name: 'compose default', text: 'POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-postgres}' },
  { name: 'uuid and private ip', text: 'uuid=f47ac10b-58cc-4372-a567-0e02b2c3d479 ip=10.1.2.3' },
];
