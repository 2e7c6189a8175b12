'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { createCart, addItem, cartTotal } = require('../src/cart');

test('the cart total counts every unit, not every line', () => {
  const cart = addItem(addItem(createCart(), 'apple', 2), 'cheese');
  assert.equal(cartTotal(cart), 2 * 350 + 590);
});
