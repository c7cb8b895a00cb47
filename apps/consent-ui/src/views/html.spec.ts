import { escapeHtml, html, SafeHtml } from './html';

// An alias, so that Prettier leaves these templates exactly as written (it formats `html`-tagged ones).
const h = html;

describe('html template', () => {
  it('escapes every interpolated string, in text and in attributes', () => {
    const name = `<script>alert("x")</script> & 'friends'`;
    const out = h`<p title="${name}">${name}</p>`.value;
    expect(out).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;friends&#39;">' +
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;friends&#39;</p>',
    );
    expect(out).not.toContain('<script>');
  });

  it('cannot be broken out of a quoted attribute', () => {
    const value = '" onmouseover="alert(1)';
    expect(h`<input value="${value}" />`.value).toBe('<input value="&quot; onmouseover=&quot;alert(1)" />');
  });

  it('nests templates without double-escaping, and escapes inside lists', () => {
    const items = ['a<b', 'c&d'].map((s) => h`<li>${s}</li>`);
    expect(h`<ul>${items}</ul>`.value).toBe('<ul><li>a&lt;b</li><li>c&amp;d</li></ul>');
  });

  it('renders numbers and drops null, undefined and false', () => {
    expect(h`${1}${null}${undefined}${false}${0}`.value).toBe('10');
  });

  it('treats only SafeHtml as markup', () => {
    expect(h`${new SafeHtml('<b>ok</b>')}`.value).toBe('<b>ok</b>');
    expect(h`${'<b>no</b>'}`.value).toBe('&lt;b&gt;no&lt;/b&gt;');
    expect(escapeHtml('plain text')).toBe('plain text');
  });
});
