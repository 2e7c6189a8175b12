import { formatEuros, perPersonCents } from './split';

const input = (id: string): HTMLInputElement => document.getElementById(id) as HTMLInputElement;
const out = document.getElementById('per-person') as HTMLElement;

function update(): void {
  const bill = Math.round(Number(input('bill').value) * 100);
  const tip = Number(input('tip').value);
  const people = Number(input('people').value);
  try {
    out.textContent = formatEuros(perPersonCents(bill, tip, people));
  } catch {
    out.textContent = '—';
  }
}

for (const id of ['bill', 'tip', 'people']) input(id).addEventListener('input', update);
update();
