'use strict';
// The browser flow for my-app (repositories.example.yaml, client.flow): what the evidence service
// does in Chromium on the case branch's revision, and which page it captures for the receipt.
// docs/target-repositories.md describes the `cl` API and the capture expectations.
module.exports = async function flow(cl) {
  await cl.goto('/');
  await cl.expectVisible('main');
  await cl.capture('home', { expect: { title: 'My App', selector: 'main' } });
};
