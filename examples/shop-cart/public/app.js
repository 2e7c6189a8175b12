'use strict';
(function () {
  const { createCart, addItem, lineTotal, cartTotal, formatCents } = window.module.exports;
  const cart = createCart();
  const body = document.querySelector('#lines tbody');

  function render() {
    body.replaceChildren(
      ...cart.lines.map((line) => {
        const tr = document.createElement('tr');
        for (const text of [line.name, `× ${line.qty}`, formatCents(lineTotal(line))]) {
          const td = document.createElement('td');
          td.textContent = text;
          tr.append(td);
        }
        return tr;
      }),
    );
    document.getElementById('total').textContent = formatCents(cartTotal(cart));
  }

  for (const button of document.querySelectorAll('button[data-sku]')) {
    button.addEventListener('click', () => {
      addItem(cart, button.dataset.sku);
      render();
    });
  }
  render();
})();
