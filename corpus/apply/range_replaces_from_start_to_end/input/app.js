const a = 1;
function old() {
  step1();
  step2();
}
const b = 2;
