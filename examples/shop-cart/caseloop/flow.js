'use strict';
// The client flow caseloop runs in a real browser to show the cart total after a change.
// Runs on fixture data only (the built-in catalogue), so its screenshots need no human privacy check.
module.exports = async function flow(cl) {
  await cl.goto('/');
  await cl.click('#add-apple');
  await cl.click('#add-apple');
  await cl.click('#add-cheese');
  await cl.expectText('#total', '€12.90');
  await cl.capture('total-counts-every-unit', { expect: { title: 'Cart', selector: '#total' } });
};
