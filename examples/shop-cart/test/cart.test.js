'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { createCart, addItem, removeItem, lineTotal, formatCents } = require('../src/cart');

test('adding the same product twice increases its quantity', () => {
  const cart = addItem(addItem(createCart(), 'apple'), 'apple');
  assert.equal(cart.lines.length, 1);
  assert.equal(cart.lines[0].qty, 2);
});

test('a line total is price times quantity', () => {
  const cart = addItem(createCart(), 'bread', 3);
  assert.equal(lineTotal(cart.lines[0]), 660);
});

test('removing a product drops its line', () => {
  const cart = removeItem(addItem(addItem(createCart(), 'apple'), 'bread'), 'apple');
  assert.deepEqual(cart.lines.map((l) => l.sku), ['bread']);
});

test('unknown products and bad quantities are refused', () => {
  assert.throws(() => addItem(createCart(), 'pear'), /unknown product/);
  assert.throws(() => addItem(createCart(), 'apple', 0), /positive whole number/);
});

test('cents are shown in euros', () => {
  assert.equal(formatCents(700), '€7.00');
});
