'use strict';

/** Prices are in cents; quantities are whole numbers. */
const CATALOGUE = {
  apple: { name: 'Apple', price: 350 },
  bread: { name: 'Bread', price: 220 },
  cheese: { name: 'Cheese', price: 590 },
};

function createCart() {
  return { lines: [] };
}

function addItem(cart, sku, qty = 1) {
  const product = CATALOGUE[sku];
  if (!product) throw new Error(`unknown product ${sku}`);
  if (!Number.isInteger(qty) || qty < 1) throw new Error('quantity must be a positive whole number');
  const line = cart.lines.find((l) => l.sku === sku);
  if (line) line.qty += qty;
  else cart.lines.push({ sku, name: product.name, price: product.price, qty });
  return cart;
}

function removeItem(cart, sku) {
  cart.lines = cart.lines.filter((l) => l.sku !== sku);
  return cart;
}

function lineTotal(line) {
  return line.price * line.qty;
}

function cartTotal(cart) {
  return cart.lines.reduce((sum, line) => sum + lineTotal(line), 0);
}

function formatCents(cents) {
  return `€${(cents / 100).toFixed(2)}`;
}

module.exports = { CATALOGUE, createCart, addItem, removeItem, lineTotal, cartTotal, formatCents };
