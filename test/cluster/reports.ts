/** Distinct bugs (each a case of its own), written the way people file them: ready for triage. */
export const BUGS = [
  'The cart total ignores quantities: two apples and one cheese show €9.40 instead of €12.90. Expected every unit to count. Web shop in Chrome 120, version 1.4.2; customers are undercharged on every order. Screenshot attached.',
  'Login page throws TypeError: Cannot read properties of undefined (reading "token") after submitting the form. Expected to be signed in. Firefox 121 on Windows 11, shop 1.4.2. Nobody can sign in since this morning; screenshot attached.',
  'Search returns HTTP 500 for queries with an umlaut such as "käse": the results page shows an error. Expected matching products. Safari 17 on macOS 14, shop 1.4.2. German customers cannot search at all; log excerpt attached.',
  'Product images are missing on the category page of /garden: broken image icons everywhere. Expected thumbnails. Edge 120 on Windows 10, shop 1.4.2. The garden sale page looks broken to every visitor; screenshot attached.',
  'Checkout rejects valid postcodes with a leading zero like 01067 and says "invalid postcode". Expected the order to go through. Chrome 119 on Android 14, shop 1.4.2. Customers in Dresden cannot order; screenshot attached.',
  'The newsletter signup button does nothing on the footer of the home page; the console logs ReferenceError: subscribe is not defined. Expected a confirmation. Chrome 120 on Linux, shop 1.4.2. We lose every signup; screenshot attached.',
];

export const FEEDBACK =
  'Feature request: it would be great to have a wishlist so I can save products for later.';
