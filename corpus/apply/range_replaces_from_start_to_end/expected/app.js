const a = 1;
function renamed() {
  return 0;
}
const b = 2;
